"""What a replay's users look at, computed from a finished run.

``replay_summary(record, end_time)`` reads a run's ``RunRecord`` and returns
JSON-able, deterministic plain data:

- per priority tier (``priorityClassName``, else ``priority <n>``; highest first)
  and in total: pods, scheduled (bound at least once), pending at the end, deleted
  while pending, preemptions made, victims taken, and the scheduling delay (first
  ``scheduledAt - createdAt``, simulated seconds) as nearest-rank p50/p90/p99,
  mean and max;
- allocation at ``0, interval, ... <= end_time``: the requests of the pods bound at
  that instant (terminating ones count, finished ones not, as the scheduler's cache
  sees it) and their ratio to the allocatable of the nodes present at the end.

``render_summary`` prints the same as a few aligned text lines.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

import numpy as np

from kubesched.api.duration import HOUR
from kubesched.api.resources import pod_requests
from kubesched.api.types import CPU, NANOS, SUCCEEDED, Pod
from kubesched.driver.record import PodLife, RunRecord
from kubesched.sim.scenario import Run

GPU: Final = "nvidia.com/gpu"
DEFAULT_RESOURCES: Final = (CPU, GPU)
PERCENTILES: Final = (50, 90, 99)
TOTAL: Final = "total"


def tier_of(pod: Pod) -> str:
    """The tier a pod is counted under: its PriorityClass name, else its priority."""
    return pod.priority_class_name or f"priority {pod.priority}"


def percentile(sorted_values: Sequence[float], p: float) -> float:
    """Nearest-rank percentile: the smallest value with at least p% of the values at
    or below it. ``sorted_values`` must be sorted and non-empty."""
    rank = max(1, math.ceil(p / 100 * len(sorted_values)))
    return sorted_values[rank - 1]


def _delay_stats(delays: list[int]) -> dict[str, float] | None:
    if not delays:
        return None
    values = sorted(d / NANOS for d in delays)
    out = {f"p{p}": percentile(values, p) for p in PERCENTILES}
    out["mean"] = round(sum(values) / len(values), 6)
    out["max"] = values[-1]
    return out


def _record_lookup(records: Sequence[PodLife]) -> Callable[[str, int], PodLife | None]:
    """``namespace/name`` at time t -> the record of the pod of that name then (the
    latest created at or before t: names can be reused after a deletion)."""
    by_key: dict[str, list[PodLife]] = defaultdict(list)
    for rec in sorted(records, key=lambda r: r.created_at):
        by_key[rec.pod.key].append(rec)
    starts = {k: [r.created_at for r in recs] for k, recs in by_key.items()}

    def find(key: str, t: int) -> PodLife | None:
        recs = by_key.get(key)
        if not recs:
            return None
        i = bisect_right(starts[key], t) - 1
        return recs[max(i, 0)]

    return find


def _release_time(rec: PodLife) -> int | None:
    """When a bound pod stopped holding its node's resources (None: still holds them):
    when it finished (Succeeded while watched), else when it was deleted."""
    if rec.pod.phase == SUCCEEDED and rec.scheduled_at is not None and rec.finished_at is not None:
        done = rec.finished_at
        return done if rec.deleted_at is None else min(done, rec.deleted_at)
    return rec.deleted_at


def allocation_series(
    record: RunRecord,
    end_time: int,
    *,
    interval: int = HOUR,
    resources: Sequence[str] = DEFAULT_RESOURCES,
) -> dict[str, Any]:
    """Allocated requests of bound pods at each multiple of ``interval`` up to
    ``end_time`` (ns), per resource, with the nodes' total allocatable."""
    if interval <= 0:
        raise ValueError("interval must be positive")
    times = np.arange(0, end_time + 1, interval, dtype=np.int64)
    bound = [r for r in record.lives.values() if r.scheduled_at is not None]
    starts = np.array([r.scheduled_at for r in bound], dtype=np.int64)
    never = np.iinfo(np.int64).max
    ends = np.array(
        [never if (t := _release_time(r)) is None else t for r in bound], dtype=np.int64
    )
    cache: dict[int, dict[str, int]] = {}
    requests = []
    for r in bound:
        req = cache.get(id(r.pod.spec))
        if req is None:
            req = pod_requests(r.pod.spec)
            cache[id(r.pod.spec)] = req
        requests.append(req)
    out: dict[str, Any] = {"intervalSeconds": interval / NANOS, "times": (times / NANOS).tolist()}
    s_order = np.argsort(starts, kind="stable")
    e_order = np.argsort(ends, kind="stable")
    s_sorted = starts[s_order]
    e_sorted = ends[e_order]
    s_idx = np.searchsorted(s_sorted, times, side="right")
    e_idx = np.searchsorted(e_sorted, times, side="right")
    for res in resources:
        amounts = np.array([req.get(res, 0) for req in requests], dtype=np.int64)
        added = np.concatenate(([0], np.cumsum(amounts[s_order])))
        removed = np.concatenate(([0], np.cumsum(amounts[e_order])))
        allocated = added[s_idx] - removed[e_idx]
        total = sum(n.allocatable.get(res, 0) for n in record.nodes.values())
        ratio = [round(float(a) / total, 6) for a in allocated] if total else [0.0] * len(allocated)
        out[res] = {"total": total, "allocated": allocated.tolist(), "ratio": ratio}
    return out


def replay_summary(
    record: RunRecord,
    end_time: int,
    *,
    interval: int = HOUR,
    resources: Sequence[str] = DEFAULT_RESOURCES,
    tier: Callable[[Pod], str] = tier_of,
) -> dict[str, Any]:
    """The summary document (see the module docstring)."""
    records = sorted(
        record.lives.values(), key=lambda r: (r.pod.namespace, r.pod.name, r.created_at)
    )
    priority: dict[str, int] = {}
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    delays: dict[str, list[int]] = defaultdict(list)
    for rec in records:
        t = tier(rec.pod)
        priority[t] = max(priority.get(t, rec.pod.priority), rec.pod.priority)
        c = counts[t]
        c["pods"] += 1
        if rec.scheduled_at is not None:
            c["scheduled"] += 1
            delays[t].append(rec.scheduled_at - rec.created_at)
        elif rec.deleted_at is None:
            c["pendingAtEnd"] += 1
        else:
            c["deletedWhilePending"] += 1
    find = _record_lookup(records)
    for p in record.preemptions:
        pre = find(p.preemptor, p.time)
        if pre is not None:
            counts[tier(pre.pod)]["preemptions"] += 1
        for v in p.victims:
            vic = find(v, p.time)
            if vic is not None:
                counts[tier(vic.pod)]["victims"] += 1
    order = sorted(counts, key=lambda t: (-priority.get(t, 0), t))
    fields = (
        "pods",
        "scheduled",
        "pendingAtEnd",
        "deletedWhilePending",
        "preemptions",
        "victims",
    )

    def row(c: Mapping[str, int], d: list[int], prio: int | None) -> dict[str, Any]:
        out: dict[str, Any] = {} if prio is None else {"priority": prio}
        out.update({f: c.get(f, 0) for f in fields})
        out["schedulingDelaySeconds"] = _delay_stats(d)
        return out

    tiers = {t: row(counts[t], delays[t], priority.get(t, 0)) for t in order}
    total_counts: Counter[str] = Counter()
    all_delays: list[int] = []
    for t in order:
        total_counts.update(counts[t])
        all_delays.extend(delays[t])
    return {
        "simulatedSeconds": end_time / NANOS,
        "nodes": len(record.nodes),
        "tiers": tiers,
        TOTAL: row(total_counts, all_delays, None),
        "allocation": allocation_series(record, end_time, interval=interval, resources=resources),
    }


def summarize_run(run: Run, **kwargs: Any) -> dict[str, Any]:
    """``replay_summary`` of a finished ``run_scenario`` result."""
    return replay_summary(run.record, run.end_time, **kwargs)


def _fmt(v: float | None) -> str:
    if v is None:
        return "-"
    return f"{v:g}" if abs(v) < 1e6 else f"{v:.0f}"


def render_summary(summary: Mapping[str, Any]) -> str:
    """A table per tier (counts, delay percentiles) and one line per resource."""
    header = ["TIER", "PRIORITY", "PODS", "SCHEDULED", "PENDING", "WITHDRAWN"]
    header += ["PREEMPTIONS", "VICTIMS", "DELAY P50", "P90", "P99", "MAX"]
    rows = [header]
    entries = [*summary["tiers"].items(), (TOTAL, summary[TOTAL])]
    for name, t in entries:
        d = t["schedulingDelaySeconds"] or {}
        rows.append(
            [
                name,
                str(t["priority"]) if "priority" in t else "",
                str(t["pods"]),
                str(t["scheduled"]),
                str(t["pendingAtEnd"]),
                str(t["deletedWhilePending"]),
                str(t["preemptions"]),
                str(t["victims"]),
                *(f"{_fmt(d.get(k))}s" if d else "-" for k in ("p50", "p90", "p99", "max")),
            ]
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines = ["   ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    alloc = summary["allocation"]
    times = alloc["times"]
    for res, series in alloc.items():
        if not isinstance(series, dict):
            continue
        ratios = series["ratio"]
        if not ratios:
            continue
        peak = max(range(len(ratios)), key=lambda i: ratios[i])
        mean = sum(ratios) / len(ratios)
        lines.append(
            f"{res}: allocated mean {mean:.1%}, peak {ratios[peak]:.1%} at "
            f"{_fmt(times[peak])}s, at end {ratios[-1]:.1%} "
            f"(total {series['total']}, {len(ratios)} samples every "
            f"{_fmt(alloc['intervalSeconds'])}s)"
        )
    return "\n".join(lines) + "\n"
