"""One call's row: what the history keeps of a call (``CallRecord``), how it is stored (its
scalar values, each an SQL column, and one JSON document), and the check sealed into every
stored row. Every other room of the history builds on this one."""

from workbench.history.row._check import (
    CHANGED,
    CheckResult,
    check,
    digest,
    picker,
    seal,
    unsealed,
    with_warnings,
)
from workbench.history.row._codec import (
    KIND_LIST,
    KINDS,
    STORED,
    Mended,
    decode,
    encode,
    keyed,
    mend,
    reason,
    unanswered,
)
from workbench.history.row._record import (
    DETAIL,
    FIELDS,
    SCALARS,
    CallRecord,
    clean_text,
    plain_json,
)

__all__ = [
    "CHANGED",
    "DETAIL",
    "FIELDS",
    "KINDS",
    "KIND_LIST",
    "SCALARS",
    "STORED",
    "CallRecord",
    "CheckResult",
    "Mended",
    "check",
    "clean_text",
    "decode",
    "digest",
    "encode",
    "keyed",
    "mend",
    "picker",
    "plain_json",
    "reason",
    "seal",
    "unanswered",
    "unsealed",
    "with_warnings",
]
