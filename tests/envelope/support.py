"""Hypothesis strategies shared by the property tests."""

from __future__ import annotations

from hypothesis import strategies as st

import workbench as wb

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53), max_value=2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
json_values = st.recursive(
    json_scalars,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(), children, max_size=4)
    ),
    max_leaves=12,
)
optional_text = st.none() | st.text(min_size=1).filter(lambda s: s.strip() != "")
kinds = st.sampled_from(list(wb.ErrorKind))

successes = st.builds(
    wb.success,
    tool=st.text(min_size=1),
    result=json_values,
    warnings=st.lists(st.text(), max_size=3),
)
failures = st.builds(
    wb.failure,
    kind=kinds,
    message=st.text(min_size=1).filter(lambda s: s.strip() != ""),
    tool=optional_text,
    field=optional_text,
    expected=optional_text,
    retryable=st.none() | st.booleans(),
    details=st.none() | st.dictionaries(st.text(), json_values, max_size=3),
    recovery_hint=optional_text,
)
envelopes = successes | failures
