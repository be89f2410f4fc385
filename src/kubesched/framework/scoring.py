"""Score helpers shared by plugins (upstream pluginhelper.DefaultNormalizeScore)."""

from __future__ import annotations

import numpy as np

from kubesched.framework.nodetable import IntArray
from kubesched.framework.results import MAX_NODE_SCORE, NodeScore


def default_normalize_score(
    scores: list[NodeScore], reverse: bool, max_priority: int = MAX_NODE_SCORE
) -> None:
    """Scale scores to [0, max_priority] by the maximum (integer division); with
    ``reverse`` the scale is flipped. All-zero scores stay 0 (or become
    ``max_priority`` with ``reverse``)."""
    max_count = max((s.score for s in scores), default=0)
    if max_count == 0:
        if reverse:
            for s in scores:
                s.score = max_priority
        return
    for s in scores:
        v = _go_div(max_priority * s.score, max_count)
        s.score = max_priority - v if reverse else v


def default_normalize_vector(
    scores: IntArray, reverse: bool, max_priority: int = MAX_NODE_SCORE
) -> IntArray:
    """Vector form of :func:`default_normalize_score`."""
    if len(scores) == 0:
        return scores
    max_count = max(int(scores.max()), 0)
    if max_count == 0:
        if reverse:
            return np.full(len(scores), max_priority, dtype=np.int64)
        return scores
    scaled = go_div_vec(max_priority * scores, max_count)
    return max_priority - scaled if reverse else scaled


def _go_div(a: int, b: int) -> int:
    """Integer division truncating toward zero, as Go's ``/``."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def go_div_vec(a: IntArray, b: int) -> IntArray:
    """Elementwise Go-style (truncating) integer division by a positive scalar."""
    q = np.abs(a) // abs(b)
    neg = (a < 0) != (b < 0)
    return np.where(neg, -q, q)
