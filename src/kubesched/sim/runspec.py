"""One simulation described as plain data, so that ``simulate``, ``compare`` and
``sweep`` run it the same way (and a sweep can ship it to another process).

``RunSpec`` holds what ``kubesched simulate`` reads from its flags: the input
(``-f`` files, ``--config``, ``--trace`` with its import options), ``--seed``,
``--until``, ``--feature-gates`` and ``--per-node``. ``load`` then ``execute``
is exactly what ``simulate`` does; ``result_document`` is the SimulationResult
that ``simulate -o json`` prints (``replay`` for a trace, and ``nodes`` plus
pods' ``requests`` when asked, as ``--show nodes`` adds them).

The trace's import options take the run's seed, as ``simulate --trace`` does:
a seed changes both the sampling of the trace and every random choice of the
run. Bad input raises ``InputError``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

from kubesched.api.errors import InputError
from kubesched.api.input_limits import DEFAULT_LIMITS, InputLimits
from kubesched.api.load import Document
from kubesched.driver.loop import DEFAULT_HORIZON
from kubesched.driver.nodes_report import add_requests, node_entries
from kubesched.scheduler.registry import parse_feature_gates
from kubesched.sim.scenario import Run, Scenario, load_config, load_scenario, run_scenario
from kubesched.sim.traces import ImportOptions, TraceObjects, parse_trace_spec


@dataclass(frozen=True)
class RunSpec:
    files: tuple[str, ...] = ()
    config_file: str | None = None
    seed: int = 0
    until: int | None = None
    feature_gates: str = ""
    """As ``--feature-gates`` (``Name=true,...``); checked by ``load``."""
    per_node: bool = False
    trace: str | None = None
    """``FORMAT:PATH[,PATH...]`` as ``--trace``."""
    trace_options: ImportOptions = field(default_factory=ImportOptions)
    """Its ``seed`` is replaced by the run's."""
    limits: InputLimits = DEFAULT_LIMITS


@dataclass(frozen=True)
class Loaded:
    scenario: Scenario
    trace: TraceObjects | None
    horizon: int
    """The safety horizon: ``DEFAULT_HORIZON``, or the trace's (its last event plus its span)."""

    @property
    def end(self) -> int:
        """When the run stops at the latest (for a progress bar)."""
        return self.horizon if self.trace is None else min(self.horizon, self.trace.last_event)


def gates(spec: RunSpec) -> dict[str, bool]:
    """``spec``'s feature gates; InputError naming ``--feature-gates`` if malformed."""
    try:
        return parse_feature_gates(spec.feature_gates)
    except ValueError as err:
        raise InputError(str(err), field="--feature-gates") from None


def load(spec: RunSpec, *, stdin: TextIO | None = None, first: Sequence[Document] = ()) -> Loaded:
    """The scenario of ``spec``'s input; ``first``: objects before the files' (a live
    cluster's snapshot, ``--from-cluster``; not with a trace)."""
    gates(spec)  # bad gates fail before any reading
    if spec.trace is None:
        scenario = load_scenario(
            list(spec.files),
            config_file=spec.config_file,
            stdin=stdin,
            limits=spec.limits,
            first=first,
        )
        return Loaded(scenario, None, DEFAULT_HORIZON)
    from kubesched.sim.traces.replay import build_scenario, horizon

    fmt, paths = parse_trace_spec(spec.trace)
    trace = fmt.load(paths, dataclasses.replace(spec.trace_options, seed=spec.seed))
    base = config = None
    if spec.files:
        base = load_scenario(
            list(spec.files), config_file=spec.config_file, stdin=stdin, limits=spec.limits
        )
    elif spec.config_file is not None:  # a configuration for the trace's objects alone
        config = load_config(spec.config_file)
    return Loaded(build_scenario(trace, config, base=base), trace, horizon(trace))


def execute(
    spec: RunSpec,
    loaded: Loaded,
    *,
    watch: bool = False,
    explain: bool = False,
    progress: Callable[[int], None] | None = None,
) -> Run:
    """Run the loaded scenario as ``spec`` says (``until``, gates, per-node)."""
    return run_scenario(
        loaded.scenario,
        seed=spec.seed,
        until=spec.until,
        watch=watch,
        per_node=spec.per_node,
        feature_gates=gates(spec),
        horizon=loaded.horizon,
        progress=progress,
        explain=explain,
    )


def document(run: Run, loaded: Loaded, *, nodes: bool = False) -> dict[str, Any]:
    """The SimulationResult of a finished run, as ``simulate -o json`` prints it
    (with ``--show nodes`` when ``nodes``)."""
    doc = run.result()
    if loaded.trace is not None:
        from kubesched.sim.traces.summary import summarize_run

        doc["replay"] = summarize_run(run)
    if nodes:
        doc["nodes"] = node_entries(run.record)
        add_requests(doc, run.record)
    return doc


def result_document(spec: RunSpec, *, nodes: bool = False) -> dict[str, Any]:
    """``load``, ``execute`` and ``document`` in one call."""
    loaded = load(spec)
    return document(execute(spec, loaded), loaded, nodes=nodes)
