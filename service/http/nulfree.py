"""What the OpenAPI document says the server enforces of every request beyond the types: no NUL
(U+0000) in any string or key (:mod:`service.http.hardening` refuses it), and integers written
without a fraction. Used by :mod:`service.http.openapi` on every request schema."""

from __future__ import annotations

from typing import Any

REF = "#/components/schemas/{name}"

#: What JSON Schema's ``integer`` cannot say (it counts ``28.0`` as one): the policy, stated in
#: the document's ``info`` (and ``x-integer-policy``); Schemathesis's hook writes positive
#: cases' integers so (tests/integration/schemathesis/hooks.py).
INTEGER_POLICY = (
    "Integers in requests are JSON integers written without a fraction or exponent (28, not "
    "28.0 or 2.8e1): any other spelling is 400 request.invalid. Strings in requests never hold "
    "NUL (U+0000): every request string's schema says so with a pattern."
)
#: What the server enforces of every string it reads (``service.http.hardening``): no NUL. A
#: request string without a pattern of its own gets this one, so the schema says it.
NUL_FREE = "^[^\\x00]*$"
#: Any JSON value without a NUL in a string or key: a free-form object of a request (a command,
#: a query, options, a position) holds these.
_JSON_VALUE = "NulFreeJson"
_JSON_VALUE_SCHEMA: dict[str, Any] = {
    "description": "Any JSON value with no NUL (U+0000) in any string or key",
    "anyOf": [
        {"type": "string", "pattern": NUL_FREE},
        {"type": "number"},
        {"type": "boolean"},
        {"type": "null"},
        {"type": "array", "items": {"$ref": REF.format(name=_JSON_VALUE)}},
        {
            "type": "object",
            "propertyNames": {"pattern": NUL_FREE},
            "additionalProperties": {"$ref": REF.format(name=_JSON_VALUE)},
        },
    ],
}


def nul_free(schema: Any) -> Any:
    """``schema`` (a request's), with :data:`NUL_FREE` on every string that has no pattern,
    enum or const, and free-form objects holding :data:`_JSON_VALUE` values (changed in place
    and returned)."""
    if isinstance(schema, list):
        for item in schema:
            nul_free(item)
    if not isinstance(schema, dict):
        return schema
    if schema.get("type") == "string" and not {"pattern", "enum", "const"} & set(schema):
        schema["pattern"] = NUL_FREE
    if schema.get("type") == "object" and "properties" not in schema:
        # a map (a dict of a typed request, or a free-form object): NUL-free keys
        schema.setdefault("propertyNames", {"pattern": NUL_FREE})
        schema.setdefault("additionalProperties", {"$ref": REF.format(name=_JSON_VALUE)})
    for key in ("properties", "items", "anyOf", "oneOf", "allOf", "prefixItems"):
        if key == "properties":
            for value in schema.get(key, {}).values():
                nul_free(value)
        elif key in schema:
            nul_free(schema[key])
    if isinstance(schema.get("additionalProperties"), dict):
        nul_free(schema["additionalProperties"])
    return schema
