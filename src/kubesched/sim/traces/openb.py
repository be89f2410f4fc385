"""The Alibaba ``openb`` GPU-cluster trace (clusterdata ``cluster-trace-gpu-v2023``).

Two CSV files, nodes ``sn,cpu_milli,memory_mib,gpu,model`` and pods
``name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,
creation_time,deletion_time,scheduled_time`` (times in seconds). docs/traces.md
is the mapping to Node and Pod objects (resources, GPU-model affinity, QoS
priority classes, ``create-at``/``run-for``/``delete-at`` timing, and
``ImportOptions.gpu_share`` for fractional GPUs).
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from kubesched.api.convert import check_dns_subdomain
from kubesched.api.duration import format_duration
from kubesched.api.errors import InputError
from kubesched.api.input_limits import InputLimits, ReadBudget, read_file
from kubesched.api.sim_annotations import CREATE_AT, DELETE_AT, RUN_FOR
from kubesched.api.types import (
    CPU,
    MEMORY,
    PODS,
    Affinity,
    Container,
    Node,
    NodeAffinity,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Pod,
    PodSpec,
    PriorityClass,
)
from kubesched.sim.traces import (
    GPU_SHARE_MILLI,
    GPU_SHARE_MODES,
    GPU_SHARE_ROUND_UP,
    GPU_SHARE_SKIP,
    ImportOptions,
    ImportStats,
    TierPriority,
    TraceObjects,
)
from kubesched.sim.traces.common import TimeScaler, keep_indices, resize_nodes

NAME: Final = "openb"

GPU: Final = "nvidia.com/gpu"
GPU_MILLI: Final = "openb.alibaba.com/gpu-milli"
"""Scalar resource of ``--gpu-share=milli``, and the annotation keeping a pod's share."""
LABEL_GPU_MODEL: Final = "openb.alibaba.com/gpu-model"
LABEL_QOS: Final = "openb.alibaba.com/qos"
NAMESPACE: Final = "default"
CONTAINER: Final = "main"
IMAGE: Final = "registry.k8s.io/pause:3.10"
MIB: Final = 1 << 20
WHOLE_GPU_MILLI: Final = 1000

DEFAULT_PRIORITIES: Final[Mapping[str, TierPriority]] = {
    "LS": TierPriority(10000),
    "Guaranteed": TierPriority(8000),
    "Burstable": TierPriority(6000),
    "BE": TierPriority(4000),
}
"""QoS tier -> PriorityClass: latency-sensitive above guaranteed, burstable and best
effort; all may preempt lower tiers. Override with ``ImportOptions.priorities``."""

NODE_COLUMNS: Final = ("sn", "cpu_milli", "memory_mib", "gpu", "model")
POD_COLUMNS: Final = (
    "name",
    "cpu_milli",
    "memory_mib",
    "num_gpu",
    "gpu_milli",
    "gpu_spec",
    "qos",
    "pod_phase",
    "creation_time",
    "deletion_time",
    "scheduled_time",
)
DEFAULT_POD_FILE: Final = "openb_pod_list_default.csv"


def class_name(tier: str) -> str:
    """``openb-<tier lowercased>``: ``LS`` -> ``openb-ls``."""
    return f"openb-{tier.lower()}"


# --------------------------------------------------------------------------- reading


@dataclass(frozen=True, slots=True)
class _Table:
    path: str
    columns: dict[str, int]
    rows: list[list[str]]
    """Data rows; row i is line i + 2 of the file."""


def _read_table(path: str, budget: ReadBudget) -> _Table:
    # Read within the input cap first: csv alone would read /dev/zero forever.
    text = read_file(path, budget)
    try:
        reader = csv.reader(io.StringIO(text, newline=""))
        header = next(reader, None)
        rows = [r for r in reader if r]
    except csv.Error as err:
        raise InputError(" ".join(str(err).split()), source=path) from None
    if header is None:
        raise InputError("empty file: expected a CSV header", source=path)
    columns = {name.strip(): i for i, name in enumerate(header)}
    return _Table(path, columns, rows)


def _is_nodes(t: _Table) -> bool:
    return "sn" in t.columns


def _is_pods(t: _Table) -> bool:
    return "name" in t.columns and "qos" in t.columns


def _expand(paths: Sequence[str]) -> list[str]:
    """Files as given; a directory contributes its ``*node_list*.csv`` and its default
    pod list (``openb_pod_list_default.csv``, or its only ``*pod_list*.csv``)."""
    out: list[str] = []
    for path in paths:
        if not os.path.isdir(path):
            out.append(path)
            continue
        names = sorted(n for n in os.listdir(path) if n.endswith(".csv"))
        node_files = [n for n in names if "node_list" in n]
        pod_files = [n for n in names if "pod_list" in n]
        if DEFAULT_POD_FILE in pod_files:
            pod_files = [DEFAULT_POD_FILE]
        for what, found in (("node list", node_files), ("pod list", pod_files)):
            if len(found) != 1:
                listed = ", ".join(found) if found else "none"
                raise InputError(
                    f"expected one openb {what} (*{what.replace(' ', '_')}*.csv) "
                    f"in the directory, found {listed}; name the files instead",
                    source=path,
                )
        out.extend(os.path.join(path, n) for n in (*node_files, *pod_files))
    return out


def _tables(paths: Sequence[str], max_input_bytes: int) -> tuple[_Table, _Table]:
    """The node and the pod table, told apart by their headers (any order)."""
    files = _expand(paths)
    if len(files) != 2:
        raise InputError(
            f"openb needs two CSV files (nodes and pods) or their directory, got {len(files)}"
        )
    budget = ReadBudget(InputLimits(max_input_bytes=max_input_bytes))
    tables = [_read_table(p, budget) for p in files]
    nodes = [t for t in tables if _is_nodes(t)]
    pods = [t for t in tables if _is_pods(t)]
    if len(nodes) != 1 or len(pods) != 1:
        raise InputError(
            "openb needs one node list (columns " + ",".join(NODE_COLUMNS) + ") and one "
            "pod list (columns " + ",".join(POD_COLUMNS) + ")",
            source=",".join(files),
        )
    for t, needed in ((nodes[0], NODE_COLUMNS), (pods[0], POD_COLUMNS)):
        missing = [c for c in needed if c not in t.columns]
        if missing:
            raise InputError(f"missing column(s): {', '.join(missing)}", source=t.path)
    return nodes[0], pods[0]


class _Row:
    """Typed access to one CSV row, with errors naming file, line and column."""

    __slots__ = ("cells", "line", "table")

    def __init__(self, table: _Table, index: int) -> None:
        self.table = table
        self.cells = table.rows[index]
        self.line = index + 2

    def error(self, column: str, message: str) -> InputError:
        return InputError(message, source=self.table.path, obj=f"line {self.line}", field=column)

    def text(self, column: str) -> str:
        i = self.table.columns[column]
        return self.cells[i].strip() if i < len(self.cells) else ""

    def opt_int(self, column: str) -> int | None:
        """A non-negative integer, or None for an empty cell."""
        t = self.text(column)
        if not t:
            return None
        try:
            v = int(t)
        except ValueError:
            try:
                f = float(t)  # some exports write "12.0"
            except ValueError:
                raise self.error(column, f'"{t}": not an integer') from None
            if not f.is_integer():
                raise self.error(column, f'"{t}": not an integer') from None
            v = int(f)
        if v < 0:
            raise self.error(column, f'"{t}": must not be negative')
        return v

    def req_int(self, column: str) -> int:
        v = self.opt_int(column)
        if v is None:
            raise self.error(column, "required value is empty")
        return v


# --------------------------------------------------------------------------- nodes


def _nodes(table: _Table, options: ImportOptions, milli: bool) -> list[Node]:
    out: list[Node] = []
    seen: dict[str, int] = {}
    for i in range(len(table.rows)):
        row = _Row(table, i)
        name = row.text("sn")
        try:
            check_dns_subdomain(name, "sn")
        except InputError as err:
            raise row.error("sn", err.message) from None
        if name in seen:
            raise row.error("sn", f'node "{name}" already defined on line {seen[name]}')
        seen[name] = row.line
        gpus = row.req_int("gpu")
        allocatable = {
            CPU: row.req_int("cpu_milli"),
            MEMORY: row.req_int("memory_mib") * MIB,
            PODS: options.max_pods,
        }
        if gpus:
            allocatable[GPU] = gpus
            if milli:
                allocatable[GPU_MILLI] = gpus * WHOLE_GPU_MILLI
        model = row.text("model")
        labels = {LABEL_GPU_MODEL: model} if model else {}
        out.append(Node(name, labels=labels, allocatable=allocatable))
    return out


# --------------------------------------------------------------------------- pods


def _priority_map(options: ImportOptions) -> dict[str, TierPriority]:
    tiers = dict(DEFAULT_PRIORITIES)
    tiers.update(options.priorities)
    return tiers


def _classes(tiers: Mapping[str, TierPriority]) -> list[PriorityClass]:
    return [
        PriorityClass(
            class_name(tier),
            p.value,
            preemption_policy=p.preemption_policy,
            description=f"openb trace QoS tier {tier}",
        )
        for tier, p in tiers.items()
    ]


@dataclass(slots=True)
class _Counts:
    fractional: int = 0
    never_scheduled: int = 0
    no_deletion: int = 0


class _PodBuilder:
    """Builds pods; specs are shared between pods of equal shape, as pods of one
    template are, so that per-spec caches of the scheduler stay small."""

    def __init__(self, options: ImportOptions, tiers: Mapping[str, TierPriority]) -> None:
        self.options = options
        self.tiers = tiers
        self.scale = TimeScaler(options.time_scale)
        self.specs: dict[tuple[int, int, int, int, tuple[str, ...]], PodSpec] = {}
        self.counts = _Counts()
        self.last_event = 0

    def spec(self, cpu: int, mem: int, gpus: int, milli: int, models: tuple[str, ...]) -> PodSpec:
        key = (cpu, mem, gpus, milli, models)
        spec = self.specs.get(key)
        if spec is not None:
            return spec
        requests = {CPU: cpu, MEMORY: mem * MIB}
        if gpus:
            requests[GPU] = gpus
        if milli:
            requests[GPU_MILLI] = milli
        affinity = None
        if models:
            requirement = NodeSelectorRequirement(LABEL_GPU_MODEL, "In", models)
            affinity = Affinity(
                node_affinity=NodeAffinity(
                    required=NodeSelector((NodeSelectorTerm(match_expressions=(requirement,)),))
                )
            )
        spec = PodSpec(
            containers=(Container(CONTAINER, image=IMAGE, requests=requests),),
            affinity=affinity,
        )
        self.specs[key] = spec
        return spec

    def build(self, row: _Row) -> Pod | None:
        name = row.text("name")
        try:
            check_dns_subdomain(name, "name")
        except InputError as err:
            raise row.error("name", err.message) from None
        qos = row.text("qos")
        if qos not in self.tiers:
            raise row.error(
                "qos",
                f'unknown tier "{qos}"; map it to a priority with --priorities {qos}=VALUE',
            )
        gpus = row.req_int("num_gpu")
        share = row.opt_int("gpu_milli")
        share = WHOLE_GPU_MILLI if share is None else share
        if share > WHOLE_GPU_MILLI:
            raise row.error("gpu_milli", f'"{share}": more than one GPU (1000)')
        annotations: dict[str, str] = {}
        fractional = gpus > 0 and share < WHOLE_GPU_MILLI
        milli = 0
        if fractional:
            self.counts.fractional += 1
            mode = self.options.gpu_share
            if mode == GPU_SHARE_SKIP:
                return None
            annotations[GPU_MILLI] = str(share)
            if mode == GPU_SHARE_MILLI:
                milli, gpus = gpus * share, 0
        elif gpus and self.options.gpu_share == GPU_SHARE_MILLI:
            milli = gpus * WHOLE_GPU_MILLI
        models = tuple(dict.fromkeys(m.strip() for m in row.text("gpu_spec").split("|") if m))
        spec = self.spec(row.req_int("cpu_milli"), row.req_int("memory_mib"), gpus, milli, models)
        self._times(row, annotations)
        return Pod(
            name,
            NAMESPACE,
            labels={LABEL_QOS: qos},
            annotations=annotations,
            spec=spec,
            priority_class_name=class_name(qos),
        )

    def _times(self, row: _Row, annotations: dict[str, str]) -> None:
        created = row.req_int("creation_time")
        scheduled = row.opt_int("scheduled_time")
        deleted = row.opt_int("deletion_time")
        ns = self.scale.ns
        create_at = ns(created)
        annotations[CREATE_AT] = format_duration(create_at)
        last = create_at
        self.last_event = max(self.last_event, last)
        if self.options.no_deletions:
            return
        if scheduled is not None and scheduled < created:
            raise row.error("scheduled_time", f"{scheduled} is before creation_time {created}")
        if deleted is None:
            self.counts.no_deletion += 1
        elif scheduled is not None:
            if deleted < scheduled:
                raise row.error("deletion_time", f"{deleted} is before scheduled_time {scheduled}")
            annotations[RUN_FOR] = format_duration(ns(deleted - scheduled))
            last = ns(deleted)
        else:
            if deleted < created:
                raise row.error("deletion_time", f"{deleted} is before creation_time {created}")
            self.counts.never_scheduled += 1
            last = ns(deleted)
            annotations[DELETE_AT] = format_duration(last)
        self.last_event = max(self.last_event, last)


# --------------------------------------------------------------------------- the format


class OpenB:
    """The ``openb`` format: ``load([nodes.csv, pods.csv] | [dir], options)``."""

    @property
    def name(self) -> str:
        return NAME

    @property
    def description(self) -> str:
        return "Alibaba GPU cluster trace 2023 (openb_node_list*.csv, openb_pod_list*.csv)"

    def load(self, paths: Sequence[str], options: ImportOptions) -> TraceObjects:
        if options.gpu_share not in GPU_SHARE_MODES:
            raise InputError(
                f'unknown mode "{options.gpu_share}"; one of: {", ".join(GPU_SHARE_MODES)}',
                field="--gpu-share",
            )
        node_table, pod_table = _tables(paths, options.max_input_bytes)
        milli = options.gpu_share == GPU_SHARE_MILLI
        nodes = resize_nodes(_nodes(node_table, options, milli), options, NAME)
        tiers = _priority_map(options)
        builder = _PodBuilder(options, tiers)
        stats = ImportStats(NAME, nodes_in_trace=len(node_table.rows))
        stats.pods_in_trace = len(pod_table.rows)
        pods: list[Pod] = []
        seen: dict[str, int] = {}
        for i in keep_indices(len(pod_table.rows), options, NAME):
            row = _Row(pod_table, i)
            pod = builder.build(row)
            if pod is None:
                continue
            if pod.name in seen:
                raise row.error(
                    "name", f'pod "{pod.name}" already defined on line {seen[pod.name]}'
                )
            seen[pod.name] = row.line
            pods.append(pod)
            stats.pods_by_tier[row.text("qos")] += 1
        stats.nodes = len(nodes)
        stats.pods = len(pods)
        stats.notes = list(_notes(builder.counts, options))
        return TraceObjects(_classes(tiers), nodes, pods, stats, builder.last_event)


def _notes(c: _Counts, options: ImportOptions) -> Iterator[str]:
    if c.fractional:
        if options.gpu_share == GPU_SHARE_ROUND_UP:
            yield f"{c.fractional} with fractional GPU rounded up to 1"
        elif options.gpu_share == GPU_SHARE_SKIP:
            yield f"{c.fractional} with fractional GPU skipped"
        else:
            yield (
                f"{c.fractional} with fractional GPU as {GPU_MILLI} "
                "(per-node total, not per-GPU packing)"
            )
    if c.never_scheduled:
        yield f"{c.never_scheduled} never scheduled in the trace: deleted at deletion_time"
    if c.no_deletion:
        yield f"{c.no_deletion} without deletion_time: run to the end"
    if options.no_deletions:
        yield "deletion times ignored: pods run to the end"


FORMAT: Final = OpenB()
