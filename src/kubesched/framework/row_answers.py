"""The one store of per-row answers kept across scheduling cycles.

Upstream's opportunistic batching (KEP-5598) reuses the answers computed for
one pod for the next pods of the same ``PodSignature``: the pod-side values
the signable plugins declare they read. Here the answers are kept per table
row (the filter statuses of nominated nodes, a node's potential victims and
dry-run answer, row-pure scores, resource verdicts): an entry holds, for one
signature, an answer per table slot that stays valid until its row changes.

``RowAnswers`` owns that bookkeeping for every such cache: entries keyed by a
signature (compared by value, or by the identity of the objects it holds, never
by ``id()``), a bounded number of them (the oldest, or least recently used,
goes first), and each entry's cursors into the change logs of the node table
(``NodeTable.rows_changed_since``) and, if asked, of the nominated-load index
(``NominatedLoadIndex.rows_changed_since``). ``lookup`` hands an entry out with
the rows changed since its previous lookup (the caller recomputes those rows
only) or drops it, for one of the named flush reasons:

- ``new-key``: no entry for the signature (a first meeting, or after a flush);
- ``evicted``: dropped to make room for another signature;
- ``layout``: the table's arrays were reallocated (``layout_generation``), the
  store was handed another table, or the nominated-load index was rebuilt;
- ``nodes``: a node was added, updated or removed (``node_generation``), for
  stores whose answers read the nodes' own state;
- ``log-truncated``: the change log no longer reaches the entry's cursor;
- ``too-many-changes``: more rows changed than recomputing them is worth.

Each flush is counted on the table, by store name and reason
(``NodeTable.row_answer_flushes``): the metric
``scheduler_row_answer_flushes_total{cache, reason}`` (``scheduler.metrics``).
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Final, Generic, NamedTuple, TypeVar

from kubesched.framework.nodetable import NodeTable
from kubesched.framework.nominated import NominatedLoadIndex
from kubesched.framework.types import SpecFacts

NEW_KEY: Final = "new-key"
EVICTED: Final = "evicted"
LAYOUT: Final = "layout"
NODES: Final = "nodes"
LOG_TRUNCATED: Final = "log-truncated"
TOO_MANY_CHANGES: Final = "too-many-changes"
FLUSH_REASONS: Final = (NEW_KEY, EVICTED, LAYOUT, NODES, LOG_TRUNCATED, TOO_MANY_CHANGES)

_NOTHING: Final[list[int]] = []


class PodSignature(NamedTuple):
    """The pod-side key of answers (upstream's PodSignature): pods with equal
    signatures get equal answers on equal rows. The objects are compared by
    identity (one ``SpecFacts`` per distinct spec) and held by the key."""

    owner: object
    """What answers (the framework or handle: its plugins and their args)."""
    facts: SpecFacts
    skip: frozenset[str]
    """The filters the cycle skips."""
    priority: int
    node_name: str
    """The pod's ``spec.nodeName``: NodeName reads it, and it is not in the spec
    facts (pods of one spec may name different nodes)."""
    extra: Hashable = None
    """What else the answers depend on (e.g. the pod's UID when it counts itself)."""


class RowEntry:
    """Base of a store's entries: the cursors its answers are current at
    (subclasses add the per-slot answers)."""

    __slots__ = ("_epoch", "_layout", "_load_seq", "_nodes", "_seq")
    _epoch: int
    _layout: int
    _load_seq: int
    _nodes: int
    _seq: int


E = TypeVar("E", bound=RowEntry)


class RowAnswers(Generic[E]):
    """Entries of per-row answers by signature (see the module docstring).

    ``keys``: how many signatures are kept; ``lru``: a lookup refreshes its
    entry (else the oldest put goes first); ``nodes``: entries die when a node
    changes; an entry is brought up to date for at most ``capacity //
    too_many`` changed rows (0: any number)."""

    __slots__ = (
        "_entries",
        "_keys",
        "_last",
        "_lru",
        "_nodes",
        "_seen",
        "_table",
        "_too_many",
        "name",
    )

    def __init__(
        self,
        name: str,
        keys: int,
        *,
        lru: bool = False,
        nodes: bool = False,
        too_many: int = 0,
    ) -> None:
        self.name = name
        self._keys = keys
        self._lru = lru
        self._nodes = nodes
        self._too_many = too_many
        self._entries: dict[Hashable, E] = {}
        self._table: NodeTable | None = None
        self._seen: dict[Hashable, int] = {}
        """Signatures met without an entry -> the table's ``change_seq`` then."""
        self._last: object = _NOTHING
        """The key object last moved to the end of ``_entries`` (a lookup of that
        same object, the usual case, needs no reordering: hashing once)."""

    def __len__(self) -> int:
        return len(self._entries)

    def lookup(
        self, key: Hashable, table: NodeTable, index: NominatedLoadIndex | None = None
    ) -> tuple[E | None, list[int]]:
        """The entry of ``key`` and the rows of ``table`` (and, with ``index``, of
        its nominated load) changed since its previous lookup or ``put``, possibly
        repeated; its cursors move to now. (None, []) when there is no entry it
        could bring up to date: it is dropped (the flush counted) and the caller
        computes the answers afresh (and may ``put`` a new entry). The list is
        shared: do not modify it."""
        if self._table is not table:
            self._flush_all(table)
        entries = self._entries
        e = entries.get(key)
        if e is None:
            self.count(table, NEW_KEY)
            return None, _NOTHING
        if self._lru and key is not self._last:
            entries[key] = entries.pop(key)
            self._last = key
        seq = table.change_seq
        if e._layout != table.layout_generation:
            reason = LAYOUT
        elif self._nodes and e._nodes != table.node_generation:
            reason = NODES
        elif e._seq == seq and index is None:
            return e, _NOTHING
        else:
            changed: list[int] | None = _NOTHING
            if e._seq != seq:
                changed = table.rows_changed_since(e._seq)
            reason = None
            if index is not None and changed is not None:
                if e._epoch != index.epoch:
                    reason = LAYOUT
                elif e._load_seq != index.change_seq:
                    moved = index.rows_changed_since(e._load_seq)
                    changed = None if moved is None else changed + moved
            if changed is None:
                reason = reason or LOG_TRUNCATED
            elif self._too_many and len(changed) > table.capacity // self._too_many:
                reason = TOO_MANY_CHANGES
            if reason is None and changed is not None:
                e._seq = seq
                if index is not None:
                    e._load_seq = index.change_seq
                return e, changed
        assert reason is not None
        del entries[key]
        self._last = _NOTHING
        self.count(table, reason)
        return None, _NOTHING

    def put(
        self, key: Hashable, table: NodeTable, entry: E, index: NominatedLoadIndex | None = None
    ) -> E:
        """Keep ``entry`` for ``key``, current as of now (evicting the oldest
        entry when the store is full)."""
        if self._table is not table:
            self._flush_all(table)
        entry._layout = table.layout_generation
        entry._nodes = table.node_generation
        entry._seq = table.change_seq
        entry._load_seq = -1 if index is None else index.change_seq
        entry._epoch = -1 if index is None else index.epoch
        entries = self._entries
        entries.pop(key, None)
        entries[key] = entry
        self._last = key
        if len(entries) > self._keys:
            del entries[next(iter(entries))]
            self.count(table, EVICTED)
        return entry

    def met_before(self, key: Hashable, table: NodeTable) -> bool:
        """Whether ``key`` (without an entry) was met before the table last changed;
        else it is remembered as met now. Lets a signature get an entry only once
        it comes back in a later cycle: one-off signatures cost nothing more."""
        first = self._seen.get(key)
        if first is not None and first != table.change_seq:
            return True
        seen = self._seen
        seen[key] = table.change_seq
        if len(seen) > 4 * self._keys:
            del seen[next(iter(seen))]
        return False

    def count(self, table: NodeTable, reason: str) -> None:
        """Count one flush of this store for ``reason`` on ``table``."""
        counts = table.row_answer_flushes
        k = (self.name, reason)
        counts[k] = counts.get(k, 0) + 1

    def _flush_all(self, table: NodeTable) -> None:
        for _ in self._entries:
            self.count(table, LAYOUT)
        self._entries.clear()
        self._seen.clear()
        self._last = _NOTHING
        self._table = table
