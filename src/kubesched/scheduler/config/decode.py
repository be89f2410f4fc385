"""The reader kit (``kubesched.api.reader``) under kube-scheduler's strict decoding
policy: unknown fields (``strict decoding error: unknown field "x"``), wrong JSON
types (``cannot unmarshal string into Go value of type int32``) and out-of-range
integers raise ``ConfigError`` naming the path. ``None`` is an absent or null field;
integers are int32 unless ``INT64`` is given.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from kubesched.api.goformat import go_quote
from kubesched.api.messages import child
from kubesched.api.reader import Reader, ReadPolicy
from kubesched.scheduler.config.field_errors import fail

INT32: Final = 32
INT64: Final = 64


def _json_type(value: object) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, list | tuple):
        return "array"
    return type(value).__name__


def _wrong_type(value: object, go_type: str) -> str:
    return f"cannot unmarshal {_json_type(value)} into Go value of type {go_type}"


def _bad_number(value: int | float, go_type: str) -> str:
    return f"cannot unmarshal number {value} into Go value of type {go_type}"


def _unknown_field(key: str) -> str:
    return f"strict decoding error: unknown field {go_quote(key)}"


STRICT: Final = ReadPolicy(
    fail=fail,
    wrong_type=_wrong_type,
    bad_number=_bad_number,
    integral_floats=False,
    unknown_field=_unknown_field,
)
"""kube-scheduler's strict decoding of its configuration."""

_READ: Final = Reader(STRICT)

check_fields = _READ.check_fields
get_mapping = _READ.opt_map
get_list = _READ.opt_list
as_str = _READ.as_str
get_str = _READ.opt_str
get_bool = _READ.opt_bool
get_str_list = _READ.opt_str_list


def as_mapping(value: object, path: str) -> Mapping[str, object]:
    """A mapping; null is the wrong type here (a list item, the document)."""
    return _READ.as_map(value, path, null_ok=False)


def as_int(value: object, path: str, bits: int = INT32) -> int:
    return _READ.as_int(value, path, bits)


def get_int(obj: Mapping[str, object], key: str, path: str, bits: int = INT32) -> int | None:
    return _READ.opt_int(obj, key, path, bits=bits)


def get_str_map(obj: Mapping[str, object], key: str, path: str) -> dict[str, str] | None:
    """A ``map[string]string``; keys taken as text, values must be strings (null too)."""
    m = get_mapping(obj, key, path)
    if m is None:
        return None
    p = child(path, key)
    return {str(k): as_str(v, child(p, str(k))) for k, v in m.items()}
