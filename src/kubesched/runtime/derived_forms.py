"""The vectorised forms the runtime resolves for each Filter / Score plugin.

``FilterForms.of`` resolves a Filter plugin's declarations once per framework. A
plugin declaring its reads gets its vectorised forms from one
``framework.derive.Derived`` per plugin (``DerivedAnswers``), shared by Filter and
Score; such a filter is static and spec-determined for a pod exactly when its
``Reads`` exist and do not read the node's pods (``static_for``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.derive import Derived
from kubesched.framework.interfaces import (
    FilterPlugin,
    NodeSet,
    RowFilterPlugin,
    StaticFilterPlugin,
    VectorFilterPlugin,
    Verdicts,
    WhatIfFilterPlugin,
    WhatIfRowFilterPlugin,
    is_spec_determined_filter,
)
from kubesched.framework.nodetable import IntArray, NodeTable
from kubesched.framework.reads import DerivedFilterPlugin, DerivedScorePlugin, Reads
from kubesched.framework.status import Status
from kubesched.framework.types import PodInfo

VectorFn = Callable[[CycleState, PodInfo, NodeTable], Verdicts | None]
RowsFn = Callable[[CycleState, PodInfo, NodeTable, IntArray], Verdicts | None]
WhatIfFn = Callable[[CycleState, PodInfo, IntArray, IntArray], Verdicts | None]
RowFn = Callable[[CycleState, PodInfo, int, list[int]], Status | None]
ReadsFn = Callable[[CycleState, PodInfo], Reads | None]
ScoreVectorFn = Callable[[CycleState, PodInfo, NodeSet], IntArray | None]
"""``VectorScorePlugin.score_vector`` or a derived plugin's scores."""
ScoreSlotsFn = Callable[[CycleState, PodInfo, NodeTable], IntArray | None]
"""``SlotScorePlugin.score_slots`` or a derived plugin's slot scores."""


class DerivedAnswers:
    """The ``Derived`` of each plugin declaring its reads, by name, created on first
    need, one framework's."""

    __slots__ = ("_by_name",)

    def __init__(self) -> None:
        self._by_name: dict[str, Derived] = {}

    def of(self, name: str) -> Derived:
        got = self._by_name.get(name)
        if got is None:
            got = self._by_name[name] = Derived()
        return got

    def score_forms(self, p: object) -> tuple[ScoreVectorFn | None, ScoreSlotsFn | None]:
        """A derived Score plugin's (scores, slot scores), bound; (None, None) for
        any other plugin."""
        if not isinstance(p, DerivedScorePlugin):
            return None, None
        d = self.of(p.name)
        return functools.partial(d.scores, p), functools.partial(d.slots, p)


def static_for(reads: Reads | None) -> bool:
    """A derived filter's verdicts for the pod hold whatever pods nodes hold."""
    return reads is not None and not reads.pod_dependent


@dataclass(frozen=True, slots=True)
class FilterForms:
    """What one Filter plugin declares beyond ``filter``, resolved once (isinstance
    on Protocols is slow)."""

    name: str
    vector: VectorFn | None = None
    """``VectorFilterPlugin.filter_vector``, or the derived verdicts."""
    rows: RowsFn | None = None
    """``RowFilterPlugin.filter_rows``."""
    static_vector: VectorFn | None = None
    """A ``StaticFilterPlugin``'s ``filter_vector`` or a derived filter's verdicts
    (static when ``static_for`` its ``reads``); None: not static."""
    reads: ReadsFn | None = None
    """``DerivedFilterPlugin.filter_reads``."""
    spec_determined: bool = False
    """``SpecDeterminedFilterPlugin``, or a derived filter (for the pods it is
    static for)."""
    what_if: WhatIfFn | None = None
    """``WhatIfFilterPlugin.filter_what_if``."""
    row: RowFn | None = None
    """``WhatIfRowFilterPlugin.filter_what_if_row``."""

    @staticmethod
    def of(p: FilterPlugin, derived: DerivedAnswers | None = None) -> FilterForms:
        if isinstance(p, DerivedFilterPlugin):
            d = (derived or DerivedAnswers()).of(p.name)
            vector: VectorFn | None = functools.partial(d.filter, p)
            return FilterForms(
                p.name, vector, static_vector=vector, reads=p.filter_reads, spec_determined=True
            )
        return FilterForms(
            name=p.name,
            vector=p.filter_vector if isinstance(p, VectorFilterPlugin) else None,
            rows=p.filter_rows if isinstance(p, RowFilterPlugin) else None,
            static_vector=(
                p.filter_vector if isinstance(p, StaticFilterPlugin) and p.static_filter else None
            ),
            spec_determined=is_spec_determined_filter(p),
            what_if=p.filter_what_if if isinstance(p, WhatIfFilterPlugin) else None,
            row=p.filter_what_if_row if isinstance(p, WhatIfRowFilterPlugin) else None,
        )
