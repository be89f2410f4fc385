"""The reader kit: typed reading of a decoded YAML/JSON document, shared by the
input objects (``api.convert``) and the scheduler configuration (``config.decode``).

A :class:`Reader` owns the structure: ``null`` is an absent field (Go's JSON
decoding), values are checked for their JSON type and integers for the Go field's
range (int32/int64), and every problem names the field's JSON path
(``spec.containers[0].name``). A :class:`ReadPolicy` owns the wording and unknown
fields: :data:`INPUT` (objects; the module-level functions) ignores unknown fields,
says ``expected a string, got 5``, takes ``3.0`` as an integer and raises
:class:`InputError` with ``field`` set; the configuration's strict policy rejects
unknown fields and words problems as Go's ``json.Unmarshal``.

The ``get_*`` readers return a default for an absent field, the ``opt_*``
readers None (a nil pointer upstream).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, TypeVar

from kubesched.api.messages import (
    child,
    describe,
    fail,
    required,
    short_number,
    type_name,
    unsupported,
)

T = TypeVar("T")
Raw = Mapping[str, Any]

INT32_MIN: Final = -(2**31)
INT32_MAX: Final = 2**31 - 1
INT64_MIN: Final = -(2**63)
INT64_MAX: Final = 2**63 - 1

_BOUNDS: Final = {32: (INT32_MIN, INT32_MAX), 64: (INT64_MIN, INT64_MAX)}


@dataclass(frozen=True, slots=True)
class ReadPolicy:
    """How a :class:`Reader` words and raises a problem; callbacks get Go type names
    (``struct``, ``slice``, ``string``, ``bool``, ``int32``, ``int64``)."""

    fail: Callable[[str, str], Exception]
    """(path, message) -> the exception to raise."""
    wrong_type: Callable[[object, str], str]
    """(value, Go type) -> the message for a value of the wrong JSON type."""
    bad_number: Callable[[int | float, str], str]
    """(value, Go type) -> the message for a number the integer type cannot hold:
    out of range, or (``integral_floats`` False) any float."""
    integral_floats: bool
    """Whether a float of integral value (``3.0``) reads as that integer; otherwise
    it is ``bad_number`` (and a fractional float is ``wrong_type`` with it True)."""
    unknown_field: Callable[[str], str] | None = None
    """None: unknown fields are ignored; else the message for one (strict decoding)."""


class Reader:
    """Typed reads under one :class:`ReadPolicy`; ``path`` is the JSON path of
    ``raw`` (or of ``value``), ``key`` a field of it."""

    __slots__ = ("_policy",)

    def __init__(self, policy: ReadPolicy) -> None:
        self._policy = policy

    @property
    def policy(self) -> ReadPolicy:
        return self._policy

    def _wrong_type(self, path: str, value: object, go_type: str) -> Exception:
        return self._policy.fail(path, self._policy.wrong_type(value, go_type))

    def check_fields(self, raw: Mapping[Any, object], path: str, allowed: Collection[str]) -> None:
        """Reject keys the Go struct does not have (no-op when the policy ignores them)."""
        unknown = self._policy.unknown_field
        if unknown is None:
            return
        for key in raw:
            if key not in allowed:
                raise self._policy.fail(child(path, str(key)), unknown(str(key)))

    # ----------------------------------------------------------------------- mappings, lists
    # The readers test the expected type first and build a path only for an error:
    # input files hold tens of thousands of objects.

    def as_map(self, value: Any, path: str, *, null_ok: bool = True) -> Raw:
        """A mapping; null is ``{}`` (or, ``null_ok`` False, the wrong type)."""
        if type(value) is dict:
            return value
        if value is None and null_ok:
            return {}
        if isinstance(value, Mapping):
            return value
        raise self._wrong_type(path, value, "struct")

    def opt_map(self, raw: Raw, key: str, path: str) -> Raw | None:
        value = raw.get(key)
        if value is None or type(value) is dict or isinstance(value, Mapping):
            return value
        raise self._wrong_type(child(path, key), value, "struct")

    def get_map(self, raw: Raw, key: str, path: str) -> Raw:
        value = raw.get(key)
        if type(value) is dict:
            return value
        if value is None:
            return {}
        if isinstance(value, Mapping):
            return value
        raise self._wrong_type(child(path, key), value, "struct")

    def opt_list(self, raw: Raw, key: str, path: str) -> Sequence[Any] | None:
        value = raw.get(key)
        if value is None or isinstance(value, list | tuple):
            return value
        raise self._wrong_type(child(path, key), value, "slice")

    def get_list(self, raw: Raw, key: str, path: str) -> Sequence[Any]:
        value = self.opt_list(raw, key, path)
        return () if value is None else value

    def map_list(
        self, raw: Raw, key: str, path: str, convert: Callable[[Raw, str], T]
    ) -> tuple[T, ...]:
        """Convert each mapping item of the list ``raw[key]`` (null items read as ``{}``)."""
        items = self.opt_list(raw, key, path)
        if not items:
            return ()
        p = child(path, key)
        out = []
        for i, item in enumerate(items):
            ip = f"{p}[{i}]"
            out.append(convert(self.as_map(item, ip), ip))
        return tuple(out)

    # ----------------------------------------------------------------------- scalars

    def as_str(self, value: Any, path: str) -> str:
        if isinstance(value, str):
            return value
        raise self._wrong_type(path, value, "string")

    def opt_str(self, raw: Raw, key: str, path: str) -> str | None:
        value = raw.get(key)
        if value is None or isinstance(value, str):
            return value
        raise self._wrong_type(child(path, key), value, "string")

    def get_str(self, raw: Raw, key: str, path: str, default: str = "") -> str:
        value = raw.get(key)
        if value is None:
            return default
        if isinstance(value, str):
            return value
        raise self._wrong_type(child(path, key), value, "string")

    def opt_bool(self, raw: Raw, key: str, path: str) -> bool | None:
        value = raw.get(key)
        if value is None or isinstance(value, bool):
            return value
        raise self._wrong_type(child(path, key), value, "bool")

    def get_bool(self, raw: Raw, key: str, path: str, default: bool = False) -> bool:
        value = self.opt_bool(raw, key, path)
        return default if value is None else value

    def as_int(self, value: Any, path: str, bits: int = 64) -> int:
        """An integer of a Go ``int<bits>`` field (``bits`` 32 or 64)."""
        lo, hi = _BOUNDS[bits]
        if type(value) is int and lo <= value <= hi:
            return value
        go_type = "int32" if bits == 32 else "int64"
        if isinstance(value, float):
            if not self._policy.integral_floats:
                raise self._policy.fail(path, self._policy.bad_number(value, go_type))
            if value.is_integer():
                value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            raise self._wrong_type(path, value, go_type)
        if not lo <= value <= hi:
            raise self._policy.fail(path, self._policy.bad_number(value, go_type))
        return value

    def opt_int(self, raw: Raw, key: str, path: str, *, bits: int = 64) -> int | None:
        value = raw.get(key)
        if value is None:
            return None
        return self.as_int(value, child(path, key), bits)

    def get_int(self, raw: Raw, key: str, path: str, default: int = 0, *, bits: int = 64) -> int:
        value = raw.get(key)
        if value is None:
            return default
        return self.as_int(value, child(path, key), bits)

    def opt_str_list(self, raw: Raw, key: str, path: str) -> tuple[str, ...] | None:
        """A ``[]string``; None when absent (a nil slice), ``()`` when empty."""
        items = self.opt_list(raw, key, path)
        if items is None:
            return None
        if all(isinstance(v, str) for v in items):
            return tuple(items)
        p = child(path, key)
        return tuple(self.as_str(v, f"{p}[{i}]") for i, v in enumerate(items))

    def get_str_list(self, raw: Raw, key: str, path: str) -> tuple[str, ...]:
        return self.opt_str_list(raw, key, path) or ()


# --------------------------------------------------------------------------- input objects

_GO_TYPE_NAMES: Final = {
    "struct": "a mapping",
    "slice": "a list",
    "string": "a string",
    "bool": "a boolean",
    "int32": "an integer",
    "int64": "an integer",
}


def _input_wrong_type(value: object, go_type: str) -> str:
    # Containers by their type, scalars by their value.
    shown = type_name(value) if go_type in ("struct", "slice") else describe(value)
    return f"expected {_GO_TYPE_NAMES[go_type]}, got {shown}"


def _input_bad_number(value: int | float, go_type: str) -> str:
    return f"expected a {go_type[3:]}-bit integer, got {short_number(value)}"


INPUT: Final = ReadPolicy(
    fail=fail,
    wrong_type=_input_wrong_type,
    bad_number=_input_bad_number,
    integral_floats=True,
)
"""Kubernetes objects as kubesched reads them: unknown fields ignored."""

_READ: Final = Reader(INPUT)

as_map = _READ.as_map
opt_map = _READ.opt_map
get_map = _READ.get_map
get_list = _READ.get_list
map_list = _READ.map_list
as_str = _READ.as_str
opt_str = _READ.opt_str
get_str = _READ.get_str
get_bool = _READ.get_bool
as_int = _READ.as_int
opt_int = _READ.opt_int
get_int = _READ.get_int
get_str_list = _READ.get_str_list


def get_str_map(raw: Raw, key: str, path: str) -> dict[str, str]:
    """``map[string]string`` (labels, annotations, nodeSelector); a null value is ""."""
    p = child(path, key)
    out: dict[str, str] = {}
    for k, v in as_map(raw.get(key), p).items():
        if not isinstance(k, str):
            raise fail(p, f"expected string keys, got {describe(k)}")
        if isinstance(v, str):
            out[k] = v
        elif v is None:
            out[k] = ""
        else:
            raise fail(f"{p}[{k}]", _input_wrong_type(v, "string"))
    return out


def req_str(raw: Raw, key: str, path: str) -> str:
    """A string that must be non-empty (``Required value``)."""
    value = get_str(raw, key, path)
    if not value:
        raise fail(child(path, key), required())
    return value


def enum(value: str, supported: Sequence[str], path: str) -> str:
    if value not in supported:
        raise fail(path, unsupported(value, supported))
    return value


def opt_enum(raw: Raw, key: str, path: str, supported: Sequence[str]) -> str | None:
    """An optional enum field; present-but-empty is ``Required value`` as upstream."""
    value = opt_str(raw, key, path)
    if value is None:
        return None
    if value == "":
        raise fail(child(path, key), required())
    return enum(value, supported, child(path, key))
