"""Click parameter types shared by the commands."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from kubesched.api.duration import parse_duration
from kubesched.api.input_limits import parse_size


class Parsed(click.ParamType):  # type: ignore[type-arg]
    """A click type around a parser of the option's text: its ValueError is the usage
    error; a value that is not text (a default given as a number) passes as it is."""

    def __init__(self, name: str, parse: Callable[[str], Any]) -> None:
        self.name = name
        self._parse = parse

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if not isinstance(value, str):
            return value
        try:
            return self._parse(value)
        except ValueError as err:
            self.fail(str(err), param, ctx)


def _nonnegative_duration(text: str) -> int:
    d = parse_duration(text)
    if d < 0:
        raise ValueError(f"{text}: must not be negative")
    return d


SIZE = Parsed("size", parse_size)
"""A byte count: a plain integer or a quantity (``512Mi``, ``1Gi``, ``1G``)."""

DURATION = Parsed("duration", _nonnegative_duration)
"""A Go duration (``90s``, ``1h30m``), not negative; nanoseconds."""


F = TypeVar("F", bound=Callable[..., Any])


def cluster_options(fn: F) -> F:
    """``--kubeconfig`` and ``--context``, as kubectl's."""
    fn = click.option(
        "--context",
        default=None,
        help="The kubeconfig context to use (default: its current context).",
    )(fn)
    return click.option(
        "--kubeconfig",
        default=None,
        metavar="PATH",
        help="Kubeconfig file (default: $KUBECONFIG, ~/.kube/config, else in-cluster).",
    )(fn)
