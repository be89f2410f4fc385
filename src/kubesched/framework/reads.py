"""Reads: which node columns a static per-node answer depends on.

A plugin whose answer depends on a few node columns (taints, ``unschedulable``,
labels, name, images, host ports) declares them per pod
(``DerivedFilterPlugin.filter_reads`` / ``DerivedScorePlugin.score_reads``) and
``framework.derive`` derives its vectorised forms.

Contract, for one plugin, pod and cycle state: nodes equal on every declared
column get equal answers, and calls with equal ``Reads`` (``fragment`` included:
the pod-side value the answer is a function of, upstream's sign fragment) get
equal answers on equal nodes. None: not static for this pod (e.g. missing
PreFilter state; the per-node path reports it).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from kubesched.api.selectors import DOES_NOT_EXIST, EXISTS, GT, IN, LT, NOT_IN, parse_int64_label
from kubesched.api.types import NodeSelectorRequirement, NodeSelectorTerm, PreferredSchedulingTerm
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import FilterPlugin, ScorePlugin
from kubesched.framework.types import PodInfo


@dataclass(frozen=True, slots=True)
class LabelRead:
    """One label key read: ``values`` compared with it, ``bounds`` compared with its
    int64 value (Gt / Lt); nodes alike on those answer alike. ``values`` None: any
    value may matter (no ``bounds``)."""

    key: str
    values: frozenset[str] | None = None
    bounds: frozenset[int] = frozenset()


Columns = tuple[bool, bool, tuple[LabelRead, ...], frozenset[str] | None, tuple[str, ...], bool]
"""``Reads.columns``: the declaration without its fragment."""


@dataclass(frozen=True, slots=True)
class Reads:
    """The node columns an answer depends on and its pod-side ``fragment``; compared
    and hashed by value."""

    taints: bool = False
    """``NodeTable.taint_set`` (the node's taints)."""
    unschedulable: bool = False
    """``NodeTable.unschedulable`` (``spec.unschedulable``)."""
    labels: tuple[LabelRead, ...] = ()
    """Label keys (one ``LabelRead`` per key, sorted by key)."""
    names: frozenset[str] | None = None
    """The node's ``metadata.name`` compared with these values (None: not read)."""
    images: tuple[str, ...] = ()
    """Normalised image names: the node's (size, num_nodes) of each, if it has it."""
    host_ports: bool = False
    """The host ports the node's pods use: depends on the pods, not on the node alone."""
    fragment: Hashable = None
    """The pod-side value the answer is a function of (compared by value)."""
    _hash: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_hash", hash((*self.columns, self.fragment)))

    def __hash__(self) -> int:
        return self._hash

    @property
    def columns(self) -> Columns:
        """The node-side part alone: rows equal on these share one answer."""
        return (
            self.taints,
            self.unschedulable,
            self.labels,
            self.names,
            self.images,
            self.host_ports,
        )

    @property
    def pod_dependent(self) -> bool:
        """True when the answer depends on the node's pods (host ports): it is then
        derived for the table's current pods only, never kept across changes."""
        return self.host_ports


NO_READS = Reads()
"""No column at all: one answer for every node."""


@runtime_checkable
class DerivedFilterPlugin(FilterPlugin, Protocol):
    def filter_reads(self, state: CycleState, pod: PodInfo) -> Reads | None:
        """What ``filter`` reads of a node for this pod (its PreFilter state already
        written); None: not static for this pod (use ``filter`` per node)."""
        ...


@runtime_checkable
class DerivedScorePlugin(ScorePlugin, Protocol):
    def score_reads(self, state: CycleState, pod: PodInfo) -> Reads | None:
        """What ``score`` reads of a node for this pod (after PreScore); None: not
        static. Normalisation must depend only on the raw score and the *set* of
        raw scores (as DefaultNormalizeScore), so one score per group suffices."""
        ...


# --------------------------------------------------------------------------- node selectors


def _requirement_value(r: NodeSelectorRequirement) -> tuple[str, str, tuple[str, ...]]:
    return (r.key, r.operator, tuple(r.values))


def term_value(t: NodeSelectorTerm) -> Hashable:
    """A node selector term as a value (the API types compare by identity)."""
    return (
        tuple(_requirement_value(r) for r in t.match_expressions),
        tuple(_requirement_value(r) for r in t.match_fields),
    )


def preferred_value(terms: Iterable[PreferredSchedulingTerm]) -> Hashable:
    """Preferred scheduling terms as a value."""
    return tuple((t.weight, term_value(t.preference)) for t in terms)


def selector_reads(
    terms: Iterable[NodeSelectorTerm],
    node_selector: Mapping[str, str] | None = None,
    fragment: Hashable = None,
) -> Reads:
    """What matching ``node_selector`` and the selector ``terms`` reads of a node:
    compared label values, presence, Gt / Lt bounds (anything else reads the whole
    value) and, for matchFields, the node's name."""
    values: dict[str, set[str] | None] = {}
    bounds: dict[str, set[int]] = {}
    names: set[str] | None = None

    def want(key: str, vals: Iterable[str] | None, bound: int | None = None) -> None:
        have = values.get(key, set())
        values[key] = None if have is None or vals is None else have | set(vals)
        if bound is not None:
            bounds.setdefault(key, set()).add(bound)

    for k, v in (node_selector or {}).items():
        want(k, (v,))
    for t in terms:
        for r in t.match_expressions:
            if r.operator in (IN, NOT_IN):
                want(r.key, r.values)
            elif r.operator in (EXISTS, DOES_NOT_EXIST):
                want(r.key, ())
            elif r.operator in (GT, LT) and len(r.values) == 1:
                bound = parse_int64_label(r.values[0])
                want(r.key, None if bound is None else (), bound)
            else:
                want(r.key, None)
        for r in t.match_fields:
            names = set(r.values) if names is None else names | set(r.values)
    labels = []
    for k, vs in sorted(values.items()):
        if vs is None:
            labels.append(LabelRead(k))
        else:
            labels.append(LabelRead(k, frozenset(vs), frozenset(bounds.get(k, ()))))
    return Reads(
        labels=tuple(labels),
        names=None if names is None else frozenset(names),
        fragment=fragment,
    )
