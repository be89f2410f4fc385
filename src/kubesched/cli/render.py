"""Rendering of simulation results: kubectl-like tables, watch lines, JSON/YAML/JSONL.

The tables read a run's ``RunRecord`` (``kubesched.driver.record``), never a backend."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final

import yaml

from kubesched.api.selectors import label_selector_matches
from kubesched.api.types import NANOS, LabelSelector, Pod
from kubesched.driver.record import PodLife, RunRecord, WatchLine
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


PodFilter = Callable[[Pod], bool]
"""Which pods a table shows."""


def pod_filter(namespace: str | None, selector: LabelSelector | None) -> PodFilter | None:
    """``-n`` and ``-l`` as kubectl applies them (None: every pod)."""
    if namespace is None and selector is None:
        return None

    def keep(pod: Pod) -> bool:
        if namespace is not None and pod.namespace != namespace:
            return False
        return selector is None or label_selector_matches(selector, pod.labels)

    return keep


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
    keep: PodFilter | None = None,
) -> str:
    """kubectl-like pod rows; ``keep`` (``-n``/``-l``) selects the pods shown; with
    ``wide``, REASON is the deletion reason of a deleted pod, else ``reasons[uid]``
    (why a pending pod failed its last attempt)."""
    header = ["NAMESPACE", "NAME", "PRIORITY", "STATUS", "NODE", "NOMINATED NODE", "AGE"]
    if wide:
        header += ["CREATED", "SCHEDULED", "DELETED", "REASON"]
    rows: list[list[str]] = [header]
    for rec in sorted_lives(record):
        if rec.deleted_at is not None and not wide:
            continue
        if keep is not None and not keep(rec.pod):
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


def nodes_table(nodes: Sequence[dict[str, Any]]) -> str:
    """``--show nodes``: requested / allocatable of cpu, memory and pods per node
    (the ``nodes`` entries of the result)."""
    rows = [["NODE", "STATUS", "CPU", "MEMORY", "PODS"]]
    for n in nodes:
        alloc, used = n["allocatable"], n["requested"]
        rows.append(
            [
                n["name"],
                "SchedulingDisabled" if n["unschedulable"] else "Ready",
                f"{used.get('cpu', '0')}/{alloc.get('cpu', '0')}",
                f"{used.get('memory', '0')}/{alloc.get('memory', '0')}",
                f"{used.get('pods', '0')}/{alloc.get('pods', '0')}",
            ]
        )
    return tabulate(rows)


def watch_table(record: RunRecord, keep: PodFilter | None = None) -> str:
    rows: list[list[str]] = [
        ["TIME", "NAMESPACE", "NAME", "PRIORITY", "STATUS", "NODE", "NOMINATED NODE", "AGE"]
    ]
    for line in record.watch_lines:
        p = line.pod
        if keep is not None and not keep(p):
            continue
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


_LISTS: Final = (("node", "nodes"), ("explanation", "explanations"))
"""Optional lists of the document (``--show nodes``, ``--explain``): one line each."""


def to_jsonl(doc: dict[str, Any], changes: Sequence[WatchLine] = ()) -> Iterable[str]:
    """The document as JSON lines in time order: ``change`` lines (the pod changes
    ``--watch`` shows), ``preemption`` and ``event`` lines merged by time (at one
    time: changes, then preemptions, then events, each in recorded order); then
    one ``pod`` line per pod (its final state), the ``node`` and ``explanation``
    lines when the document has them, and the ``result`` line last."""
    timed: list[tuple[float, int, int, dict[str, Any]]] = []
    for i, c in enumerate(changes):
        p = c.pod
        line: dict[str, Any] = {
            "type": "change",
            "time": c.time / NANOS,
            "namespace": p.namespace,
            "name": p.name,
            "priority": p.priority,
            "status": pod_status(p),
            "nodeName": p.node_name or None,
            "nominatedNodeName": p.nominated_node_name or None,
        }
        timed.append((c.time / NANOS, 0, i, line))
    for i, p in enumerate(doc["preemptions"]):
        timed.append((p["time"], 1, i, {"type": "preemption", **p}))
    for i, e in enumerate(doc["events"]):
        rest = {k: v for k, v in e.items() if k != "type"}
        timed.append((e["time"], 2, i, {"type": "event", "eventType": e["type"], **rest}))
    timed.sort(key=lambda t: t[:3])
    for *_, line in timed:
        yield json.dumps(line, ensure_ascii=False) + "\n"
    for p in doc["pods"]:
        yield json.dumps({"type": "pod", **p}, ensure_ascii=False) + "\n"
    for kind, key in _LISTS:
        for item in doc.get(key, ()):
            yield json.dumps({"type": kind, **item}, ensure_ascii=False) + "\n"
    listed = {"pods", "events", "preemptions", *(key for _, key in _LISTS)}
    summary = {k: v for k, v in doc.items() if k not in listed}
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
