"""Node selectors over a whole NodeTable at once, as boolean masks.

PodTopologySpread's node inclusion (its hand-written row form) evaluates a
pod's ``nodeSelector`` map and required node affinity over every row of a
``NodeTable`` with these functions instead of calling the per-node matchers of
``kubesched.api.selectors`` once per node. (The static plugins no longer use
them: their vectorised forms are derived from their per-node code,
``framework.derive``.) Both must agree exactly for every node (checked by
``tests/framework/test_nodematch.py``, including a property test):

- a term with neither expressions nor fields, or one that fails to parse
  (``selectors.node_selector_term_errors``), matches nothing;
- In / NotIn / Exists / DoesNotExist work on the label column's value codes
  (NotIn and DoesNotExist match nodes without the label);
- Gt / Lt compare ``LabelColumn.as_ints`` (each distinct label value parsed once
  with ``selectors.parse_int64_label``, Go's ``strconv.ParseInt``);
- matchFields read ``metadata.name`` (any other key reads as ""), In / NotIn
  with exactly one value, through ``table.row_of``.

Masks have one entry per table *slot* (``table.capacity``); entries of free
slots are meaningless and callers ignore them. None of these functions loops
over nodes in Python; callers cache the masks per pod spec (``SpecCache``).

Also here: ``SpecCache``, the per-(pod spec, table generation) cache that
PodTopologySpread's inclusion masks use.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from typing import Generic, TypeVar

import numpy as np

from kubesched.api.selectors import (
    DOES_NOT_EXIST,
    EXISTS,
    FIELD_METADATA_NAME,
    GT,
    IN,
    LT,
    NOT_IN,
    node_selector_term_errors,
    parse_int64_label,
)
from kubesched.api.types import (
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    PodSpec,
)
from kubesched.framework.nodetable import BoolArray, LabelColumn, NodeTable

T = TypeVar("T")


# --------------------------------------------------------------------------- cache


class SpecCache(Generic[T]):
    """Values derived from a pod spec and a table's static node state.

    Keyed weakly by the ``PodSpec`` object (pods of one template share it), and
    valid for one table at one ``node_generation`` (node adds, updates and
    removals bump it; pod changes do not). Plugins keep one instance per plugin
    object, because values may depend on plugin args too.
    """

    __slots__ = ("_entries",)

    def __init__(self) -> None:
        self._entries: weakref.WeakKeyDictionary[PodSpec, tuple[weakref.ref[NodeTable], int, T]] = (
            weakref.WeakKeyDictionary()
        )

    def get(self, spec: PodSpec, table: NodeTable) -> T | None:
        entry = self._entries.get(spec)
        if entry is None:
            return None
        ref, generation, value = entry
        if ref() is not table or generation != table.node_generation:
            return None
        return value

    def put(self, spec: PodSpec, table: NodeTable, value: T) -> T:
        self._entries[spec] = (weakref.ref(table), table.node_generation, value)
        return value


# --------------------------------------------------------------------------- masks


def _none(table: NodeTable) -> BoolArray:
    return np.zeros(table.capacity, dtype=np.bool_)


def _all(table: NodeTable) -> BoolArray:
    return np.ones(table.capacity, dtype=np.bool_)


def _int_compare(col: LabelColumn, op: str, bound: int) -> BoolArray:
    """Rows whose label parses as int64 (``LabelColumn.as_ints`` uses
    ``selectors.parse_int64_label``, once per distinct value) and compares ``op``
    against ``bound``."""
    vals, valid = col.as_ints()
    return valid & (vals > bound if op == GT else vals < bound)


def requirement_mask(table: NodeTable, req: NodeSelectorRequirement) -> BoolArray:
    """Rows whose labels satisfy one ``matchExpressions`` item
    (``selectors.node_selector_requirement_matches``; no validation here)."""
    op = req.operator
    if op in (IN, NOT_IN):
        col = table.label(req.key)
        hit = col.isin(req.values)
        return hit if op == IN else ~hit
    if op in (EXISTS, DOES_NOT_EXIST):
        has = table.label(req.key).has()
        return has if op == EXISTS else ~has
    if op in (GT, LT):
        if len(req.values) != 1:
            return _none(table)
        bound = parse_int64_label(req.values[0])
        if bound is None:
            return _none(table)
        return _int_compare(table.label(req.key), op, bound)
    return _none(table)


def field_requirement_mask(table: NodeTable, req: NodeSelectorRequirement) -> BoolArray:
    """Rows whose node name satisfies one ``matchFields`` item (In / NotIn, one value)."""
    if req.operator not in (IN, NOT_IN) or len(req.values) != 1:
        return _none(table)
    want = req.values[0]
    if req.key == FIELD_METADATA_NAME:
        equal = _none(table)
        row = table.row_of.get(want)
        if row is not None:
            equal[row] = True
    else:
        # Nodes expose only metadata.name; any other field reads as "".
        equal = _all(table) if want == "" else _none(table)
    return equal if req.operator == IN else ~equal


def term_mask(table: NodeTable, term: NodeSelectorTerm) -> BoolArray:
    """Rows a node selector term matches (``selectors.node_selector_term_matches``)."""
    if not term.match_expressions and not term.match_fields:
        return _none(table)
    if node_selector_term_errors(term):
        return _none(table)
    mask = _all(table)
    for r in term.match_expressions:
        mask &= requirement_mask(table, r)
    for r in term.match_fields:
        mask &= field_requirement_mask(table, r)
    return mask


def node_selector_mask(table: NodeTable, sel: NodeSelector) -> BoolArray:
    """Rows a NodeSelector matches: its terms ORed (``selectors.node_selector_matches``)."""
    mask = _none(table)
    for t in sel.terms:
        mask |= term_mask(table, t)
    return mask


def selector_map_mask(table: NodeTable, selector: Mapping[str, str]) -> BoolArray:
    """Rows matching a ``spec.nodeSelector`` map (``selectors.match_node_selector_map``)."""
    mask = _all(table)
    for k, v in selector.items():
        mask &= table.label(k).equals(v)
    return mask


def required_node_affinity_mask(table: NodeTable, spec: PodSpec) -> BoolArray:
    """Rows matching the pod's ``nodeSelector`` and required node affinity together
    (upstream ``nodeaffinity.GetRequiredNodeAffinity(pod).Match``)."""
    mask = selector_map_mask(table, spec.node_selector)
    aff = spec.affinity
    if aff is not None and aff.node_affinity is not None and aff.node_affinity.required is not None:
        mask &= node_selector_mask(table, aff.node_affinity.required)
    return mask
