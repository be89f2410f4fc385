"""What a sweep runs: the cartesian product of configurations, swept parameters and
seeds, each combination one :class:`~kubesched.sim.runspec.RunSpec`.

No Dask here: a plan is plain data, built and checked before any cluster starts.

Swept parameters (``--param NAME=V1,V2``) are named like ``simulate``'s flags
(:data:`PARAMS`): ``until`` (a duration), and the trace import options
``sample``, ``limit``, ``time-scale``, ``node-fraction``, ``drop-nodes``,
``gpu-share``, ``max-pods``, ``no-deletions`` (these need a trace). A feature
gate kubesched honours is swept by its name (``SchedulerAsyncPreemption=true,false``);
its value is added after the base ``--feature-gates``, so it wins. Values keep the
text given (the rows' parameter columns), are parsed as the flag parses them, and
a bad value raises ``InputError`` naming ``--param`` before anything runs.

Order (the rows'): configurations as given, then each parameter's values as given
(the first parameter varies slowest), then seeds; the same inputs give the same
plan.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from kubesched.api.duration import parse_duration
from kubesched.api.errors import InputError
from kubesched.scheduler.registry import FEATURE_GATES
from kubesched.sim.runspec import RunSpec
from kubesched.sim.traces import GPU_SHARE_MODES
from kubesched.sim.traces.common import parse_fraction, parse_sample

DEFAULT_CONFIG: Final = "(default)"
"""The ``config`` column of runs without ``--config`` (the default profile)."""


def _count(minimum: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        if not text.strip().isdigit() or int(text) < minimum:
            raise ValueError(f'"{text}" is not an integer >= {minimum}')
        return int(text)

    return parse


def _boolean(text: str) -> bool:
    if text.strip().lower() not in ("true", "false"):
        raise ValueError(f'"{text}" is not true or false')
    return text.strip().lower() == "true"


def _choice(choices: Sequence[str]) -> Callable[[str], str]:
    def parse(text: str) -> str:
        if text not in choices:
            raise ValueError(f'"{text}" is not one of {", ".join(choices)}')
        return text

    return parse


def _until(text: str) -> int:
    ns = parse_duration(text)
    if ns < 0:
        raise ValueError(f'"{text}" must not be negative')
    return ns


@dataclass(frozen=True)
class Param:
    """A sweepable flag: how its text parses and which field of the RunSpec (or of
    its trace options, ``trace=True``) it sets."""

    parse: Callable[[str], Any]
    field: str
    trace: bool = True


PARAMS: Final[Mapping[str, Param]] = {
    "until": Param(_until, "until", trace=False),
    "sample": Param(parse_sample, "sample"),
    "limit": Param(_count(1), "limit"),
    "time-scale": Param(lambda t: parse_fraction(t, "time-scale"), "time_scale"),
    "node-fraction": Param(lambda t: parse_fraction(t, "node-fraction"), "node_fraction"),
    "drop-nodes": Param(_count(0), "drop_nodes"),
    "gpu-share": Param(_choice(GPU_SHARE_MODES), "gpu_share"),
    "max-pods": Param(_count(1), "max_pods"),
    "no-deletions": Param(_boolean, "no_deletions"),
}


@dataclass(frozen=True)
class Combination:
    """One run of a sweep: its configuration (``config`` column), its swept values
    as given (name, text), its seed, and the RunSpec that runs it."""

    config: str
    params: tuple[tuple[str, str], ...]
    seed: int
    spec: RunSpec


def parse_seeds(text: str) -> list[int]:
    """``0-99``, ``1,5,9``, ``0-9,20-29``: the seeds in the order given, each once.
    InputError naming ``--seeds`` if malformed or empty."""
    seeds: dict[int, None] = {}
    for part in (p.strip() for p in text.split(",")):
        first, dash, last = part.partition("-")
        if not first.isdigit() or (dash and not last.isdigit()):
            raise InputError(f'"{part}" is not a seed (N) or a range (N-M)', field="--seeds")
        lo, hi = int(first), int(last) if dash else int(first)
        if hi < lo:
            raise InputError(f'"{part}": the range ends before it starts', field="--seeds")
        seeds.update(dict.fromkeys(range(lo, hi + 1)))
    return list(seeds)


def parse_param(text: str) -> tuple[str, list[str]]:
    """``NAME=V1,V2`` -> (NAME, [V1, V2]); InputError naming ``--param``."""
    name, sep, values = text.partition("=")
    name = name.strip()
    items = [v.strip() for v in values.split(",")]
    if not sep or not name or not all(items):
        raise InputError(f'"{text}": expected NAME=VALUE[,VALUE...]', field="--param")
    return name, items


def _setter(name: str, has_trace: bool) -> Callable[[RunSpec, str], RunSpec]:
    """How a value of parameter ``name`` changes a RunSpec (checked: known name)."""
    if name in FEATURE_GATES:
        return lambda spec, v: dataclasses.replace(
            spec, feature_gates=f"{spec.feature_gates},{name}={str(_boolean(v)).lower()}"
        )
    param = PARAMS.get(name)
    if param is None:
        known = ", ".join([*PARAMS, *FEATURE_GATES])
        raise InputError(f'unknown parameter "{name}" (known: {known})', field="--param")
    if param.trace and not has_trace:
        raise InputError(f'"{name}" is a trace import option: it needs --trace', field="--param")
    if not param.trace:
        return lambda spec, v: dataclasses.replace(spec, **{param.field: param.parse(v)})
    return lambda spec, v: dataclasses.replace(
        spec,
        trace_options=dataclasses.replace(spec.trace_options, **{param.field: param.parse(v)}),
    )


def plan(
    base: RunSpec,
    *,
    configs: Sequence[str | None] = (None,),
    seeds: Iterable[int] = (0,),
    params: Sequence[tuple[str, Sequence[str]]] = (),
) -> list[Combination]:
    """Every combination of ``configs`` (``None``: no ``--config``), ``params`` (name,
    values) and ``seeds``, in the module's order, over ``base`` (its files, trace,
    fixed options). Bad names or values raise InputError before any run."""
    seeds = list(seeds)
    if not seeds:
        raise InputError("no seeds", field="--seeds")
    names = [name for name, _ in params]
    if len(set(names)) != len(names):
        raise InputError("a parameter is given twice", field="--param")
    setters = [_setter(name, base.trace is not None) for name in names]
    for (name, values), setter in zip(params, setters, strict=True):
        for v in values:
            try:
                setter(base, v)
            except ValueError as err:
                text = str(err).removeprefix("--")
                text = text if text.startswith(name) else f"{name}: {text}"
                raise InputError(text, field="--param") from None
    out = []
    for config in configs or (None,):
        for values in itertools.product(*(vals for _, vals in params)):
            spec = dataclasses.replace(base, config_file=config)
            for setter, v in zip(setters, values, strict=True):
                spec = setter(spec, v)
            for seed in seeds:
                out.append(
                    Combination(
                        config if config is not None else DEFAULT_CONFIG,
                        tuple(zip(names, values, strict=True)),
                        seed,
                        dataclasses.replace(spec, seed=seed),
                    )
                )
    return out
