"""Rendering of simulation results: kubectl-like tables, watch lines, JSON/YAML/JSONL.

The tables read a run's ``RunRecord`` (``kubesched.driver.record``), never a backend."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import yaml

from kubesched.api.types import NANOS, Pod
from kubesched.driver.record import PodLife, RunRecord
from kubesched.driver.report import sorted_lives

NONE = "<none>"


def human_duration(ns: int) -> str:
    """kubectl's AGE format (apimachinery duration.HumanDuration)."""
    secs = ns // NANOS if ns >= 0 else -((-ns) // NANOS)
    if secs < -1:
        return "<invalid>"
    if secs < 0:
        return "0s"
    if secs < 120:
        return f"{secs}s"
    minutes = secs // 60
    if minutes < 10:
        s = secs % 60
        return f"{minutes}m" if s == 0 else f"{minutes}m{s}s"
    if minutes < 180:
        return f"{minutes}m"
    hours = secs // 3600
    if hours < 8:
        m = minutes % 60
        return f"{hours}h" if m == 0 else f"{hours}h{m}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        h = hours % 24
        return f"{hours // 24}d" if h == 0 else f"{hours // 24}d{h}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        dy = (hours // 24) % 365
        return f"{hours // 24 // 365}y" if dy == 0 else f"{hours // 24 // 365}y{dy}d"
    return f"{hours // 24 // 365}y"


def pod_status(pod: Pod) -> str:
    """The STATUS column as kubectl shows it."""
    if pod.deletion_timestamp is not None:
        return "Terminating"
    if pod.phase == "Succeeded":
        return "Completed"
    if pod.phase == "Failed":
        return "Error"
    return pod.phase


def tabulate(rows: Sequence[Sequence[str]]) -> str:
    """Columns padded like kubectl's tabwriter (3 spaces between columns)."""
    if not rows:
        return ""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    out = []
    for r in rows:
        cells = [c.ljust(w) for c, w in zip(r[:-1], widths[:-1], strict=True)]
        out.append(("   ".join([*cells, r[-1]])).rstrip())
    return "\n".join(out) + "\n"


def format_seconds(ns: int) -> str:
    """Exact seconds: ``30s``, ``12345.25s``, ``-1.5s``."""
    whole, frac = divmod(abs(ns), NANOS)
    text = f"{whole}.{frac:09d}".rstrip("0").rstrip(".")
    return ("-" if ns < 0 else "") + text + "s"


def pods_table(
    record: RunRecord,
    end_time: int,
    wide: bool = False,
    reasons: Mapping[str, str] | None = None,
) -> str:
    """kubectl-like pod rows; with ``wide``, REASON is the deletion reason of a
    deleted pod, else ``reasons[uid]`` (why a pending pod failed its last attempt)."""
    header = ["NAMESPACE", "NAME", "PRIORITY", "STATUS", "NODE", "NOMINATED NODE", "AGE"]
    if wide:
        header += ["CREATED", "SCHEDULED", "DELETED", "REASON"]
    rows: list[list[str]] = [header]
    for rec in sorted_lives(record):
        if rec.deleted_at is not None and not wide:
            continue
        rows.append(_pod_row(rec, end_time, wide, reasons or {}))
    return tabulate(rows)


def _pod_row(rec: PodLife, end_time: int, wide: bool, reasons: Mapping[str, str]) -> list[str]:
    p = rec.pod
    status = pod_status(p) if rec.deleted_at is None else "Deleted"
    row = [
        p.namespace,
        p.name,
        str(p.priority),
        status,
        p.node_name or NONE,
        p.nominated_node_name or NONE,
        human_duration(end_time - rec.created_at),
    ]
    if wide:
        row += [
            format_seconds(rec.created_at),
            format_seconds(rec.scheduled_at) if rec.scheduled_at is not None else NONE,
            format_seconds(rec.deleted_at) if rec.deleted_at is not None else NONE,
            _reason(rec, reasons),
        ]
    return row


def _reason(rec: PodLife, reasons: Mapping[str, str]) -> str:
    if rec.deleted_at is not None:
        return rec.deletion_reason or NONE
    if not rec.pod.node_name:
        return reasons.get(rec.pod.uid, NONE)
    return NONE


def watch_table(record: RunRecord) -> str:
    rows: list[list[str]] = [
        ["TIME", "NAMESPACE", "NAME", "PRIORITY", "STATUS", "NODE", "NOMINATED NODE", "AGE"]
    ]
    for line in record.watch_lines:
        p = line.pod
        rows.append(
            [
                format_seconds(line.time),
                p.namespace,
                p.name,
                str(p.priority),
                pod_status(p),
                p.node_name or NONE,
                p.nominated_node_name or NONE,
                human_duration(line.time - p.creation_timestamp),
            ]
        )
    return tabulate(rows)


def summary_line(record: RunRecord, end_time: int, wall_seconds: float | None) -> str:
    lives = record.lives.values()
    scheduled = sum(1 for r in lives if r.scheduled_at is not None)
    pending = sum(
        1
        for r in lives
        if r.deleted_at is None and not r.pod.node_name and r.pod.phase == "Pending"
    )
    preempted = sum(1 for r in lives if r.deletion_reason == "Preempted")
    parts = [
        f"pods: {scheduled} scheduled, {pending} pending, {preempted} preempted",
        f"preemptions: {len(record.preemptions)}",
        f"simulated: {format_seconds(end_time)}",
    ]
    if wall_seconds is not None:
        parts.append(f"wall: {wall_seconds:.2f}s")
    return "; ".join(parts)


def to_json(doc: dict[str, Any]) -> str:
    """The document with one line per top-level field and per list item (pods,
    events ...): readable, diffable, and fast (the C encoder does each line)."""
    dump = json.JSONEncoder(ensure_ascii=False, separators=(", ", ": ")).encode
    lines = ["{"]
    items = list(doc.items())
    for i, (k, v) in enumerate(items):
        comma = "," if i < len(items) - 1 else ""
        if isinstance(v, list) and v:
            lines.append(f"  {dump(k)}: [")
            lines.extend(f"    {dump(x)}," for x in v[:-1])
            lines.append(f"    {dump(v[-1])}")
            lines.append(f"  ]{comma}")
        else:
            lines.append(f"  {dump(k)}: {dump(v)}{comma}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def to_yaml(doc: dict[str, Any]) -> str:
    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=4096)


def to_jsonl(doc: dict[str, Any]) -> Iterable[str]:
    for e in doc["events"]:
        rest = {k: v for k, v in e.items() if k != "type"}
        line = {"type": "event", "eventType": e["type"], **rest}
        yield json.dumps(line, ensure_ascii=False) + "\n"
    for p in doc["preemptions"]:
        yield json.dumps({"type": "preemption", **p}, ensure_ascii=False) + "\n"
    for p in doc["pods"]:
        yield json.dumps({"type": "pod", **p}, ensure_ascii=False) + "\n"
    summary = {k: v for k, v in doc.items() if k not in ("pods", "events", "preemptions")}
    yield json.dumps({"type": "result", **summary}, ensure_ascii=False) + "\n"


class SimulatedTimeProgress:
    """A rich progress bar over simulated time (``update(ns)``); a no-op when disabled."""

    def __init__(self, total_ns: int, *, enabled: bool) -> None:
        self.total = max(total_ns, 1)
        self.enabled = enabled
        self._bar: Any = None
        self._task: Any = None
        self._last = 0

    def __enter__(self) -> SimulatedTimeProgress:
        if self.enabled:
            from rich.console import Console
            from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

            self._bar = Progress(
                TextColumn("simulated {task.fields[sim]}"),
                BarColumn(),
                TimeElapsedColumn(),
                transient=True,
                console=Console(stderr=True),
            )
            self._task = self._bar.add_task("simulate", total=self.total, sim="0s")
            self._bar.start()
        return self

    def update(self, now: int) -> None:
        if self._bar is None or now - self._last < self.total // 500:
            return
        self._last = now
        self._bar.update(self._task, completed=min(now, self.total), sim=human_duration(now))

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()
