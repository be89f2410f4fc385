"""NodeAffinity: ``spec.nodeSelector``, required and preferred node affinity, and the
scheduler-enforced ``addedAffinity`` of NodeAffinityArgs (upstream
nodeaffinity/node_affinity.go, v1.36).

- PreFilter: Skip without ``nodeSelector``, required affinity and added required
  affinity; else writes ``"PreFilterNodeAffinity"``. When every required term has
  ``matchFields metadata.name In``, a PreFilterResult of their union (of each
  term's intersection); empty: UnschedulableAndUnresolvable ``"pod affinity terms
  conflict"``.
- Filter (all UnschedulableAndUnresolvable): first the added affinity
  (``"node(s) didn't match scheduler-enforced node affinity"``), then
  ``nodeSelector`` AND required affinity (``"node(s) didn't match Pod's node
  affinity/selector"``). Terms that fail to parse simply do not match.
- PreScore: Skip when neither the pod nor the added affinity has preferred
  terms; Error when the pod's preferred terms fail to parse.
- Score: the summed weights of the matching preferred terms (added + pod);
  NormalizeScore: ``DefaultNormalizeScore(100, reverse=False)``.
Vectorised Filter and Score are derived (``reads.selector_reads``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from kubesched.api.goformat import go_aggregate
from kubesched.api.selectors import (
    FIELD_METADATA_NAME,
    IN,
    match_node_selector_map,
    node_selector_matches,
    node_selector_term_errors,
    node_selector_term_matches,
)
from kubesched.api.types import Node, NodeSelector, Pod, PodSpec, PreferredSchedulingTerm
from kubesched.framework.config import NodeAffinityArgs, PluginArgs
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventObject,
    EventResource,
    QueueingHint,
)
from kubesched.framework.interfaces import Handle, NodeSet
from kubesched.framework.nodetable import NodeTable
from kubesched.framework.reads import Reads, preferred_value, selector_reads, term_value
from kubesched.framework.results import NodeScore, PreFilterResult
from kubesched.framework.scoring import default_normalize_score
from kubesched.framework.status import SKIP, SUCCESS, Status, error, unresolvable
from kubesched.framework.types import NodeInfo, PodInfo

NAME: Final = "NodeAffinity"
PRE_FILTER_STATE_KEY: Final = "PreFilter" + NAME
PRE_SCORE_STATE_KEY: Final = "PreScore" + NAME

ERR_REASON_POD: Final = "node(s) didn't match Pod's node affinity/selector"
"""Filter reason for the pod's nodeSelector / required affinity; UnschedulableAndUnresolvable."""
ERR_REASON_ENFORCED: Final = "node(s) didn't match scheduler-enforced node affinity"
"""Filter reason for NodeAffinityArgs.addedAffinity; UnschedulableAndUnresolvable."""
ERR_REASON_CONFLICT: Final = "pod affinity terms conflict"
"""PreFilter reason when the metadata.name terms leave no node; UnschedulableAndUnresolvable."""

_POD_MISMATCH: Final = unresolvable(ERR_REASON_POD)
_ENFORCED_MISMATCH: Final = unresolvable(ERR_REASON_ENFORCED)
_CONFLICT: Final = unresolvable(ERR_REASON_CONFLICT)
_NO_SELECTOR: Final = NodeSelector(())


# --------------------------------------------------------------------------- helpers


def _required(spec: PodSpec) -> NodeSelector | None:
    aff = spec.affinity
    if aff is None or aff.node_affinity is None:
        return None
    return aff.node_affinity.required


def _preferred(spec: PodSpec) -> tuple[PreferredSchedulingTerm, ...]:
    aff = spec.affinity
    if aff is None or aff.node_affinity is None:
        return ()
    return aff.node_affinity.preferred


def preferred_terms_error(terms: Sequence[PreferredSchedulingTerm]) -> str | None:
    """Upstream ``NewPreferredSchedulingTerms`` errors (terms with weight 0 or no
    requirements are not parsed), or None when all parse."""
    errs: list[str] = []
    for i, t in enumerate(terms):
        pref = t.preference
        if t.weight == 0 or (not pref.match_expressions and not pref.match_fields):
            continue
        errs.extend(node_selector_term_errors(pref, f"[{i}]"))
    return go_aggregate(errs) if errs else None


def node_selector_error(sel: NodeSelector) -> str | None:
    """Upstream ``NewNodeSelector`` errors (empty terms are skipped), or None."""
    errs: list[str] = []
    for i, t in enumerate(sel.terms):
        if not t.match_expressions and not t.match_fields:
            continue
        errs.extend(node_selector_term_errors(t, f"nodeSelectorTerms[{i}]"))
    return go_aggregate(errs) if errs else None


def preferred_score(terms: Sequence[PreferredSchedulingTerm], node: Node) -> int:
    """Summed weights of the matching terms (``PreferredSchedulingTerms.Score``)."""
    return sum(
        t.weight
        for t in terms
        if t.weight != 0 and node_selector_term_matches(t.preference, node.name, node.labels)
    )


def required_matches(spec: PodSpec, node: Node) -> bool:
    """``GetRequiredNodeAffinity(pod).Match(node)``, parse errors ignored (no match)."""
    if not match_node_selector_map(spec.node_selector, node.labels):
        return False
    req = _required(spec)
    return req is None or node_selector_matches(req, node.name, node.labels)


def _pre_filter_node_names(req: NodeSelector) -> tuple[frozenset[str] | None, bool]:
    """(node names, conflict) from ``metadata.name In`` matchFields, as upstream
    PreFilter: None when some term has no such requirement."""
    names: set[str] = set()
    for t in req.terms:
        term_names: set[str] | None = None
        for r in t.match_fields:
            if r.key == FIELD_METADATA_NAME and r.operator == IN:
                vals = set(r.values)
                term_names = vals if term_names is None else term_names & vals
        if term_names is None:
            return None, False
        names |= term_names
    if not names:
        return None, True
    return frozenset(names), False


# --------------------------------------------------------------------------- states


@dataclass(frozen=True, slots=True)
class PreFilterState:
    """The pod spec whose nodeSelector and required affinity Filter matches
    (immutable: clone is itself)."""

    spec: PodSpec

    def clone(self) -> PreFilterState:
        return self


@dataclass(frozen=True, slots=True)
class PreScoreState:
    """The pod's preferred terms (parsed successfully; immutable)."""

    preferred: tuple[PreferredSchedulingTerm, ...]

    def clone(self) -> PreScoreState:
        return self


# --------------------------------------------------------------------------- plugin


class NodeAffinity:
    """Args ``NodeAffinityArgs``; ValueError when ``addedAffinity`` does not parse."""

    name = NAME

    def __init__(self, args: NodeAffinityArgs | PluginArgs | None, handle: Handle) -> None:
        if args is not None and not isinstance(args, NodeAffinityArgs):
            raise TypeError(f"args are not of type NodeAffinityArgs, got {type(args).__name__}")
        self._handle = handle
        self.added_required: NodeSelector | None = None
        self.added_preferred: tuple[PreferredSchedulingTerm, ...] | None = None
        added = args.added_affinity if args is not None else None
        if added is not None:
            if added.required is not None:
                err = node_selector_error(added.required)
                if err is not None:
                    raise ValueError(
                        "parsing addedAffinity.requiredDuringSchedulingIgnoredDuringExecution: "
                        + err
                    )
                self.added_required = added.required
            if added.preferred:
                err = preferred_terms_error(added.preferred)
                if err is not None:
                    raise ValueError(
                        "parsing addedAffinity.preferredDuringSchedulingIgnoredDuringExecution: "
                        + err
                    )
                self.added_preferred = added.preferred
        self._memo_filter = object()
        self._memo_score = object()
        """This object's keys of its ``Reads`` in ``SpecFacts.memo`` (they depend on
        its args)."""

    # ------------------------------------------------------------------ events
    def events_to_register(self) -> list[ClusterEventWithHint]:
        """Node Add|UpdateNodeLabel (queueing hints on), hint: the node now matches."""
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL),
                self.is_schedulable_after_node_change,
            )
        ]

    def is_schedulable_after_node_change(
        self, pod: Pod, old: EventObject, new: EventObject
    ) -> QueueingHint:
        """QUEUE when the added or updated node matches the added affinity and the
        pod's required affinity, and (for an update) did not match before."""
        if not isinstance(new, Node):
            return QueueingHint.QUEUE
        if self.added_required is not None and not node_selector_matches(
            self.added_required, new.name, new.labels
        ):
            return QueueingHint.SKIP
        if not required_matches(pod.spec, new):
            return QueueingHint.SKIP
        if not isinstance(old, Node):
            return QueueingHint.QUEUE
        return QueueingHint.SKIP if required_matches(pod.spec, old) else QueueingHint.QUEUE

    # ------------------------------------------------------------------ PreFilter
    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: NodeTable
    ) -> tuple[PreFilterResult | None, Status]:
        """Skip, Success (maybe with node names), or UnschedulableAndUnresolvable
        ``ERR_REASON_CONFLICT``."""
        spec = pod.pod.spec
        req = _required(spec)
        if req is None and self.added_required is None and not spec.node_selector:
            return None, SKIP
        state.write(PRE_FILTER_STATE_KEY, PreFilterState(spec))
        if req is None or not req.terms:
            return None, SUCCESS
        names, conflict = _pre_filter_node_names(req)
        if conflict:
            return None, _CONFLICT
        if names is not None:
            return PreFilterResult(names), SUCCESS
        return None, SUCCESS

    def pre_filter_extensions(self) -> None:
        return None

    # ------------------------------------------------------------------ Filter
    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        """Success or UnschedulableAndUnresolvable (enforced reason first, then pod reason)."""
        n = node.node
        assert n is not None
        if self.added_required is not None and not node_selector_matches(
            self.added_required, n.name, n.labels
        ):
            return _ENFORCED_MISMATCH
        s = state.get(PRE_FILTER_STATE_KEY)
        # Without PreFilter (disabled) the pod's own spec is matched directly.
        spec = s.spec if isinstance(s, PreFilterState) else pod.pod.spec
        return SUCCESS if required_matches(spec, n) else _POD_MISMATCH

    def filter_reads(self, state: CycleState, pod: PodInfo) -> Reads:
        """The labels and name the added affinity, ``nodeSelector`` and required
        affinity compare; the latter two."""
        s = state.get(PRE_FILTER_STATE_KEY)
        spec = s.spec if isinstance(s, PreFilterState) else pod.pod.spec
        memo = pod.facts.memo if spec is pod.pod.spec else {}
        reads = memo.get(self._memo_filter)
        if not isinstance(reads, Reads):
            req = _required(spec)
            terms = (*(self.added_required or _NO_SELECTOR).terms, *(req or _NO_SELECTOR).terms)
            fragment = (
                tuple(sorted(spec.node_selector.items())),
                None if req is None else tuple(term_value(t) for t in req.terms),
            )
            reads = selector_reads(terms, spec.node_selector, fragment)
            memo[self._memo_filter] = reads
        return reads

    # ------------------------------------------------------------------ Score
    def pre_score(self, state: CycleState, pod: PodInfo, nodes: NodeSet) -> Status:
        """Skip (no preferred terms anywhere), Error (pod terms fail to parse), or
        Success with ``PRE_SCORE_STATE_KEY`` written."""
        preferred = _preferred(pod.pod.spec)
        if preferred:
            err = preferred_terms_error(preferred)
            if err is not None:
                return error(err)
        elif self.added_preferred is None:
            return SKIP
        state.write(PRE_SCORE_STATE_KEY, PreScoreState(preferred))
        return SUCCESS

    def _pod_preferred(
        self, state: CycleState, pod: PodInfo
    ) -> tuple[PreferredSchedulingTerm, ...] | Status:
        s = state.get(PRE_SCORE_STATE_KEY)
        if isinstance(s, PreScoreState):
            return s.preferred
        # Without PreScore (disabled) the pod's terms are parsed here.
        preferred = _preferred(pod.pod.spec)
        err = preferred_terms_error(preferred)
        return error(err) if err is not None else preferred

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status]:
        """Raw score: the summed weights of matching preferred terms; Error when the
        pod's terms fail to parse (only possible without PreScore)."""
        n = node.node
        assert n is not None
        count = 0
        if self.added_preferred is not None:
            count += preferred_score(self.added_preferred, n)
        preferred = self._pod_preferred(state, pod)
        if isinstance(preferred, Status):
            return 0, preferred
        return count + preferred_score(preferred, n), SUCCESS

    def score_extensions(self) -> NodeAffinity:
        return self

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: list[NodeScore]) -> Status:
        default_normalize_score(scores, reverse=False)
        return SUCCESS

    def score_reads(self, state: CycleState, pod: PodInfo) -> Reads | None:
        """The labels and name the added and the pod's preferred terms compare; the
        latter (None when they fail to parse: the per-node path reports it)."""
        preferred = self._pod_preferred(state, pod)
        if isinstance(preferred, Status):
            return None
        memo = pod.facts.memo
        reads = memo.get(self._memo_score)
        if not isinstance(reads, Reads):
            terms = (*(self.added_preferred or ()), *preferred)
            reads = selector_reads((t.preference for t in terms), None, preferred_value(preferred))
            memo[self._memo_score] = reads
        return reads
