"""Click parameter types shared by the commands."""

from __future__ import annotations

from typing import Any

import click

from kubesched.api.input_limits import parse_size


class SizeType(click.ParamType):  # type: ignore[type-arg]
    """A byte count: a plain integer or a quantity (``512Mi``, ``1Gi``, ``1G``)."""

    name = "size"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int):
            return value
        try:
            return parse_size(str(value))
        except ValueError as err:
            self.fail(str(err), param, ctx)
