"""Field errors worded like apimachinery's ``field.Error``, and Kubernetes name checks.

Upstream reports a bad configuration as ``<path>: <body>`` where the body is
``field.Error.ErrorBody()``: ``Invalid value: 200: not in valid range [0, 100]``,
``Required value``, ``Unsupported value: "X": supported values: "A", "B"``,
``Duplicate value: "x"``, ``Forbidden: <detail>``. ``FieldError.to_input_error``
turns one into ``InputError(field=<path>, message=<body>)``.

Bad values print as Go's ``ErrorBody`` prints them (integers plainly, strings
quoted, string slices as ``[]string{"a"}``); a ``GoValue`` gives a composite
value's Go rendering.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from kubesched.api.errors import InputError
from kubesched.api.goformat import go_quote, go_string_slice
from kubesched.api.selectors import qualified_name_errors

OBJ: Final = "KubeSchedulerConfiguration"


@dataclass(frozen=True, slots=True)
class GoValue:
    """A bad value whose Go rendering is given verbatim (e.g. a struct's ``%#v``)."""

    text: str


BadValue = int | str | bool | None | GoValue | Sequence[str]


def _render(value: BadValue) -> str:
    if isinstance(value, GoValue):
        return value.text
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return go_quote(value)
    return go_string_slice(list(value))


@dataclass(frozen=True, slots=True)
class FieldError:
    """One validation failure: the field path and upstream's ``ErrorBody()``."""

    path: str
    body: str

    def to_input_error(self, source: str) -> InputError:
        return InputError(self.body, source=source or None, obj=OBJ, field=self.path or None)


class ConfigError(Exception):
    """Raised inside the config package; ``parse_config`` adds the source and object."""

    def __init__(self, error: FieldError) -> None:
        super().__init__(f"{error.path}: {error.body}")
        self.error = error


def fail(path: str, body: str) -> ConfigError:
    """A ``ConfigError`` for ``path`` with an already worded body."""
    return ConfigError(FieldError(path, body))


def invalid(path: str, value: BadValue, detail: str) -> FieldError:
    body = f"Invalid value: {_render(value)}"
    return FieldError(path, f"{body}: {detail}" if detail else body)


def required(path: str, detail: str = "") -> FieldError:
    return FieldError(path, f"Required value: {detail}" if detail else "Required value")


def forbidden(path: str, detail: str) -> FieldError:
    return FieldError(path, f"Forbidden: {detail}" if detail else "Forbidden")


def duplicate(path: str, value: BadValue) -> FieldError:
    return FieldError(path, f"Duplicate value: {_render(value)}")


def not_supported(path: str, value: BadValue, valid: Sequence[str]) -> FieldError:
    body = f"Unsupported value: {_render(value)}"
    if valid:
        body += ": supported values: " + ", ".join(go_quote(v) for v in valid)
    return FieldError(path, body)


def index(path: str, i: int) -> str:
    return f"{path}[{i}]"


# --------------------------------------------------------------------------- names


def validate_label_name(path: str, name: str) -> list[FieldError]:
    """metav1validation.ValidateLabelName: one Invalid error per failed rule."""
    return [invalid(path, name, msg) for msg in qualified_name_errors(name)]
