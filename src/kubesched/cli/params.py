"""Click parameter types shared by the commands, and the ``RunSpec`` of their flags."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

from kubesched.api.duration import parse_duration
from kubesched.api.input_limits import DEFAULT_MAX_OBJECTS, InputLimits, parse_size

if TYPE_CHECKING:  # imported lazily at run time: `kubesched --help` stays fast
    from kubesched.sim.runspec import RunSpec


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


def runspec_from_options(**fields: Any) -> RunSpec:
    """The ``RunSpec`` of the running command's flags (click's current context), by
    their parameter names: ``files``, ``config_file``, ``seed``, ``until``,
    ``feature_gates``, ``per_node``, ``max_input_bytes``, ``max_objects``, and
    ``trace_spec`` with the values of ``trace_commands.trace_options`` (a command
    without ``trace_spec`` gets no trace). A flag the command lacks keeps RunSpec's
    default; ``fields`` (RunSpec's names: compare's variant) win over the flags, and
    the trace takes the spec's seed, as ``simulate --trace`` does."""
    from kubesched.cli.trace_commands import import_options
    from kubesched.sim.runspec import RunSpec

    p = click.get_current_context().params
    names = ("files", "config_file", "seed", "until", "feature_gates", "per_node")
    spec: dict[str, Any] = {n: p[n] for n in names if n in p} | fields
    size = p["max_input_bytes"]
    if "trace_spec" in p:
        values = {k: v for k, v in p.items() if k not in ("seed", "max_input_bytes")}
        spec["trace"] = p["trace_spec"]
        spec["trace_options"] = import_options(spec.get("seed", 0), size, **values)
    return RunSpec(**spec, limits=InputLimits(size, p.get("max_objects", DEFAULT_MAX_OBJECTS)))
