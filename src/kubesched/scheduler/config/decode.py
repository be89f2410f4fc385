"""Strict, typed reading of a decoded YAML/JSON document.

Mirrors what kube-scheduler's strict decoder rejects before any defaulting:
unknown fields (``strict decoding error: unknown field "x"``), values of the
wrong JSON type, and integers that do not fit the Go field (int32/int64).
Every helper raises ``ConfigError`` naming the offending path; ``None``
means "field absent or null" (a nil pointer upstream).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Final

from kubesched.scheduler.config.field_errors import ConfigError, child, fail, go_quote

INT32: Final = (-(2**31), 2**31 - 1)
INT64: Final = (-(2**63), 2**63 - 1)

_GO_TYPES: Final = {INT32: "int32", INT64: "int64"}


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


def _type_error(path: str, value: object, go_type: str) -> ConfigError:
    return fail(path, f"cannot unmarshal {_json_type(value)} into Go value of type {go_type}")


def check_fields(obj: Mapping[str, object], path: str, allowed: Collection[str]) -> None:
    """Reject keys the Go struct does not have, as the strict decoder does."""
    for key in obj:
        if key not in allowed:
            raise fail(
                child(path, str(key)), f"strict decoding error: unknown field {go_quote(str(key))}"
            )


def as_mapping(value: object, path: str) -> Mapping[str, object]:
    if not isinstance(value, Mapping):
        raise _type_error(path, value, "struct")
    return value


def get_mapping(obj: Mapping[str, object], key: str, path: str) -> Mapping[str, object] | None:
    value = obj.get(key)
    return None if value is None else as_mapping(value, child(path, key))


def get_list(obj: Mapping[str, object], key: str, path: str) -> Sequence[object] | None:
    value = obj.get(key)
    if value is None:
        return None
    if not isinstance(value, list | tuple):
        raise _type_error(child(path, key), value, "slice")
    return value


def as_int(value: object, path: str, bounds: tuple[int, int] = INT32) -> int:
    go_type = _GO_TYPES[bounds]
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, float):
            raise fail(path, f"cannot unmarshal number {value} into Go value of type {go_type}")
        raise _type_error(path, value, go_type)
    if not bounds[0] <= value <= bounds[1]:
        raise fail(path, f"cannot unmarshal number {value} into Go value of type {go_type}")
    return value


def get_int(
    obj: Mapping[str, object], key: str, path: str, bounds: tuple[int, int] = INT32
) -> int | None:
    value = obj.get(key)
    return None if value is None else as_int(value, child(path, key), bounds)


def as_str(value: object, path: str) -> str:
    if not isinstance(value, str):
        raise _type_error(path, value, "string")
    return value


def get_str(obj: Mapping[str, object], key: str, path: str) -> str | None:
    value = obj.get(key)
    return None if value is None else as_str(value, child(path, key))


def get_bool(obj: Mapping[str, object], key: str, path: str) -> bool | None:
    value = obj.get(key)
    if value is None:
        return None
    if not isinstance(value, bool):
        raise _type_error(child(path, key), value, "bool")
    return value


def get_str_list(obj: Mapping[str, object], key: str, path: str) -> tuple[str, ...] | None:
    items = get_list(obj, key, path)
    if items is None:
        return None
    p = child(path, key)
    return tuple(as_str(v, f"{p}[{i}]") for i, v in enumerate(items))


def get_str_map(obj: Mapping[str, object], key: str, path: str) -> dict[str, str] | None:
    m = get_mapping(obj, key, path)
    if m is None:
        return None
    p = child(path, key)
    return {str(k): as_str(v, child(p, str(k))) for k, v in m.items()}
