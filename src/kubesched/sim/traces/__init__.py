"""Cluster traces turned into Kubernetes objects for replay.

One small module per trace format, all behind :class:`TraceFormat`: ``load`` reads
the format's files and returns :class:`TraceObjects`, api objects whose timing is
carried by the simulation annotations (``kubesched.io/create-at``, ``delete-at``,
``run-for``). They are rendered as YAML manifests (``manifests``, ``kubesched
import``) or turned straight into a ``Scenario`` (``replay``, ``kubesched simulate
--trace``, much faster than through YAML). Built-in formats are imported on first
use; a trace is named ``FORMAT:PATH[,PATH...]`` (:func:`parse_trace_spec`). Errors
in trace files are :class:`~kubesched.api.errors.InputError` naming the file, row
and column.
"""

from __future__ import annotations

import importlib
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Final, Protocol

from kubesched.api.errors import InputError
from kubesched.api.input_limits import DEFAULT_MAX_INPUT_BYTES
from kubesched.api.types import Node, Pod, PriorityClass

__all__ = [
    "GPU_SHARE_MODES",
    "ImportOptions",
    "ImportStats",
    "TierPriority",
    "TraceFormat",
    "TraceObjects",
    "format_names",
    "get_format",
    "load_trace",
    "parse_trace_spec",
    "register",
]

GPU_SHARE_ROUND_UP: Final = "round-up"
GPU_SHARE_SKIP: Final = "skip"
GPU_SHARE_MILLI: Final = "milli"
GPU_SHARE_MODES: Final = (GPU_SHARE_ROUND_UP, GPU_SHARE_SKIP, GPU_SHARE_MILLI)
"""How a pod asking for a fraction of one GPU is represented (see docs/traces.md)."""


@dataclass(frozen=True, slots=True)
class TierPriority:
    """The PriorityClass a trace tier (QoS class, job type ...) maps to."""

    value: int
    preemption_policy: str = "PreemptLowerPriority"


@dataclass(frozen=True, slots=True)
class ImportOptions:
    """Options every format accepts; a format validates the ones it uses.

    - ``seed``: seeds every random choice; same files + same options = identical
      objects, in the same order.
    - ``limit``: keep only the first N pods (trace order), before ``sample``.
    - ``sample``: an int N >= 1 keeps N random pods (all if fewer); a Fraction in
      (0, 1] keeps ``round(f * pods)``. Kept pods stay in trace order.
    - ``time_scale``: multiplies every trace time and duration, exactly, rounded
      to the nanosecond (0.001 replays 1000 s of trace per simulated second).
    - ``node_fraction``: keep ``round(f * nodes)`` random nodes (f < 1), or add
      ``round((f - 1) * nodes)`` copies of random nodes (``<node>-copy-<k>``).
    - ``drop_nodes``: then remove N more nodes chosen at random.
    - ``gpu_share``: one of :data:`GPU_SHARE_MODES`.
    - ``priorities``: tier name -> PriorityClass value (and policy), overriding the
      format's defaults.
    - ``max_pods``: every node's ``pods`` allocatable (kubelet default 110).
    - ``no_deletions``: pods get only ``create-at`` and never finish, so the
      cluster fills up (the "schedule until full" experiments of openb).
    - ``max_input_bytes``: the most the trace's files may hold together
      (``kubesched.api.input_limits``; ``--max-input-bytes``).
    """

    seed: int = 0
    limit: int | None = None
    sample: int | Fraction | None = None
    time_scale: Fraction = Fraction(1)
    node_fraction: Fraction = Fraction(1)
    drop_nodes: int = 0
    gpu_share: str = GPU_SHARE_ROUND_UP
    priorities: Mapping[str, TierPriority] = field(default_factory=dict)
    max_pods: int = 110
    no_deletions: bool = False
    max_input_bytes: int = DEFAULT_MAX_INPUT_BYTES


@dataclass(slots=True)
class ImportStats:
    """What the import did, for the one summary line on stderr."""

    format: str
    nodes_in_trace: int = 0
    pods_in_trace: int = 0
    nodes: int = 0
    pods: int = 0
    pods_by_tier: Counter[str] = field(default_factory=Counter)
    notes: list[str] = field(default_factory=list)
    """Each approximation made, counted: ``1234 with fractional GPU rounded up to 1``."""

    def line(self) -> str:
        """``imported 8152 pods (LS 4647, BE 3398, ...), 1523 nodes: <notes>``."""
        tiers = ", ".join(f"{t} {n}" for t, n in self.pods_by_tier.most_common())
        head = f"imported {self.pods} pods"
        if self.pods != self.pods_in_trace:
            head += f" of {self.pods_in_trace}"
        if tiers:
            head += f" ({tiers})"
        head += f", {self.nodes} nodes"
        if self.nodes != self.nodes_in_trace:
            head += f" (trace has {self.nodes_in_trace})"
        return head + ("; " + "; ".join(self.notes) if self.notes else "")


@dataclass(slots=True)
class TraceObjects:
    """A trace as api objects, in creation order: pods with ``create-at`` and
    ``run-for`` or ``delete-at``, nodes and classes from time 0. ``last_event`` is
    the latest annotated time (ns). A run mutates the objects: load again for another."""

    priority_classes: list[PriorityClass]
    nodes: list[Node]
    pods: list[Pod]
    stats: ImportStats
    last_event: int = 0


class TraceFormat(Protocol):
    """One trace format. ``load`` raises InputError for unreadable or bad files and
    for options the format cannot honour; it never prints."""

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    def load(self, paths: Sequence[str], options: ImportOptions) -> TraceObjects: ...


# name -> "module:attribute" of a built-in format, imported on first use.
_BUILTIN: Final[Mapping[str, str]] = {
    "openb": "kubesched.sim.traces.openb:FORMAT",
}
_registered: dict[str, TraceFormat] = {}


def register(fmt: TraceFormat) -> None:
    """Add (or replace) a format under ``fmt.name``."""
    _registered[fmt.name] = fmt


def format_names() -> list[str]:
    return sorted({*_BUILTIN, *_registered})


def get_format(name: str) -> TraceFormat:
    """The format called ``name``; InputError naming the known ones otherwise."""
    fmt = _registered.get(name)
    if fmt is not None:
        return fmt
    target = _BUILTIN.get(name)
    if target is None:
        raise InputError(
            f'unknown trace format "{name}"; known formats: {", ".join(format_names())}'
        )
    module, _, attr = target.partition(":")
    loaded: TraceFormat = getattr(importlib.import_module(module), attr)
    _registered[name] = loaded
    return loaded


def parse_trace_spec(spec: str) -> tuple[TraceFormat, list[str]]:
    """``FORMAT:PATH[,PATH...]`` -> (format, paths), as ``simulate --trace`` takes it."""
    name, sep, rest = spec.partition(":")
    if not sep or not name:
        raise InputError(
            f'"{spec}": expected FORMAT:PATH[,PATH...], e.g. openb:NODES.csv,PODS.csv',
            field="--trace",
        )
    paths = [p for p in rest.split(",") if p]
    if not paths:
        raise InputError(f'"{spec}": no trace file given', field="--trace")
    return get_format(name), paths


def load_trace(name: str, paths: Sequence[str], options: ImportOptions) -> TraceObjects:
    """``get_format(name).load(paths, options)``."""
    return get_format(name).load(paths, options)
