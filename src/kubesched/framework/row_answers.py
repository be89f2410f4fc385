"""The one store of per-row answers kept across scheduling cycles.

As upstream's opportunistic batching (KEP-5598), answers are reused for pods of
one ``PodSignature``; here an entry holds, per signature, an answer per table slot
valid until its row changes. ``RowAnswers`` keeps a bounded number of entries and
their cursors into the table's (and optionally the nominated-load index's) change
logs; ``lookup`` hands an entry out with the rows changed since, or drops it for
a flush reason:

- ``new-key``: no entry for the signature (a first meeting, or after a flush);
- ``evicted``: dropped to make room for another signature;
- ``layout``: the table's arrays were reallocated (``layout_generation``), the
  store was handed another table, or the nominated-load index was rebuilt;
- ``nodes``: a node was added, updated or removed (``node_generation``), for
  stores whose answers read the nodes' own state;
- ``log-truncated``: the change log no longer reaches the entry's cursor;
- ``too-many-changes``: more rows changed than recomputing them is worth.

Flushes are counted (``NodeTable.row_answer_flushes``) for the metric
``scheduler_row_answer_flushes_total{cache, reason}``.
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
    """The pod-side key (upstream PodSignature): equal signatures, equal answers on
    equal rows; objects compared by identity."""

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
    """Entries by signature: ``keys`` kept (``lru`` or oldest-first eviction);
    ``nodes``: die on a node change; at most ``capacity // too_many`` changed rows
    brought up to date (0: any)."""

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
        """The entry of ``key`` and the rows (of ``table``, and of ``index``'s load)
        changed since, maybe repeated, in a shared list; cursors move to now.
        (None, []) when it cannot be brought up to date (dropped, flush counted)."""
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
        """Whether ``key`` was met before the table last changed (else remembered now),
        so one-off signatures get no entry."""
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
