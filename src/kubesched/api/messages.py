"""How kubesched words a problem in an input object's field.

The bodies follow apimachinery's ``field.Error`` (``Invalid value: "x": detail``,
``Unsupported value: ...: supported values: ...``, ``Required value``,
``Forbidden: ...``), but a bad value is shown kubesched's way: quoted as JSON and
shortened to stay on one line (``quote``), numbers bare, other values by their
JSON type (``describe``). :func:`fail` makes the :class:`InputError` whose
``field`` is the JSON path (``spec.containers[0].name``); the loader adds the
file and the object.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Final

from kubesched.api.errors import InputError


def quote(value: object) -> str:
    """Go's ``%q``-like rendering of a bad value, shortened to stay one line."""
    text = json.dumps(value if isinstance(value, str) else str(value), ensure_ascii=False)
    return text if len(text) <= 80 else text[:76] + '..."'


def type_name(value: object) -> str:
    """The JSON type of a parsed value, as users know it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "mapping"
    if isinstance(value, list | tuple):
        return "list"
    return type(value).__name__


def describe(value: object) -> str:
    """A scalar by its value (``"ten"``, ``1.5``, ``true``), anything else by type."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return quote(value)
    if isinstance(value, int | float):
        return short_number(value)
    return type_name(value)


def short_number(value: int | float) -> str:
    """``repr`` of a number, its digits elided past 40 (a message stays readable)."""
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:20]}...({len(text)} characters)"


def unsupported(value: object, supported: Sequence[str]) -> str:
    """field.NotSupported's body."""
    return f"Unsupported value: {quote(value)}: supported values: " + ", ".join(
        quote(s) for s in supported
    )


def invalid(value: object, detail: str) -> str:
    """field.Invalid's body: strings quoted, numbers bare."""
    shown = quote(value) if isinstance(value, str) else describe(value)
    return f"Invalid value: {shown}: {detail}"


REQUIRED: Final = "Required value"


def required(detail: str = "") -> str:
    """field.Required's body."""
    return f"{REQUIRED}: {detail}" if detail else REQUIRED


def forbidden(detail: str) -> str:
    """field.Forbidden's body."""
    return f"Forbidden: {detail}"


def fail(path: str, message: str) -> InputError:
    """The error to raise for the field at ``path`` ("" = the object itself)."""
    return InputError(message, field=path or None)


def child(path: str, key: str) -> str:
    """``field.Path.Child``: ``a`` + ``b`` -> ``a.b``; an empty parent gives ``b``."""
    return f"{path}.{key}" if path else key
