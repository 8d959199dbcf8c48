"""Schemathesis hooks of the API test (loaded through ``SCHEMATHESIS_HOOKS``).

JSON Schema counts ``28.0`` as an integer; the API does not (issue 10: ``expected_version``
``28.0`` is a 400, and every integer in a body is decoded strictly). The JSON data model cannot
say so, so schema-valid bodies are written the way the API documents integers: integral floats
become ints. Only in positive cases — negative cases are left as generated.
"""

from __future__ import annotations

from typing import Any

import schemathesis
from schemathesis.generation import GenerationMode


def _ints(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    if isinstance(value, dict):
        return {k: _ints(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_ints(v) for v in value]
    return value


@schemathesis.hook
def map_case(context: Any, case: Any) -> Any:
    meta = getattr(case, "meta", None)
    if meta is not None and meta.generation.mode == GenerationMode.POSITIVE:
        case.body = _ints(case.body)
    return case
