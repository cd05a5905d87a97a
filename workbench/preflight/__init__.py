"""The argument preflight: forgive the mistakes models make, then validate strictly.

``Preflight(schema)`` turns raw arguments (a JSON string, numbers as text, a single value
where a list is wanted, ...) into arguments the tool can take, naming every coercion, or into
one ``invalid_args`` envelope a model can act on. ``resilience_matrix`` sends the mistakes
models really make through a preflight only. The JSON Schema helpers it walks with are shared
by the declarations and their provider dialects.
"""

from workbench.preflight._json_schema import (
    clean_schema,
    draft_2020_12,
    json_types,
    resolve,
    split_nullable,
)
from workbench.preflight._preflight import Coercion, Preflight, PreflightResult, forgiven
from workbench.preflight._resilience import baseline_arguments, resilience_matrix

__all__ = [
    "Coercion",
    "Preflight",
    "PreflightResult",
    "baseline_arguments",
    "clean_schema",
    "draft_2020_12",
    "forgiven",
    "json_types",
    "resilience_matrix",
    "resolve",
    "split_nullable",
]
