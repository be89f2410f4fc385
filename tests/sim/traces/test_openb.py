"""The openb importer (sim/traces/openb.py): the shared trace checked row by row
against its CSV, and each option and error on tiny synthetic CSVs."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from kubesched.api.duration import format_duration, parse_duration
from kubesched.api.errors import InputError
from kubesched.api.resources import pod_requests
from kubesched.api.types import NANOS, Pod
from kubesched.sim.traces import ImportOptions, TierPriority, TraceObjects, get_format, load_trace
from kubesched.sim.traces.openb import (
    CREATE_AT,
    DELETE_AT,
    GPU,
    GPU_MILLI,
    LABEL_GPU_MODEL,
    LABEL_QOS,
    RUN_FOR,
)
from kubesched.sim.traces.replay import build_scenario
from tests.sim.traces.data import (
    OPENB_NODES,
    OPENB_PODS,
    csv_rows,
    node_row,
    openb_paths,
    pod_row,
    write_trace,
)

MIB = 1 << 20
PRIORITY = {"LS": 10000, "Guaranteed": 8000, "Burstable": 6000, "BE": 4000}


def load(paths: list[str], **options: Any) -> TraceObjects:
    return load_trace("openb", paths, ImportOptions(**options))


def by_name(trace: TraceObjects) -> dict[str, Pod]:
    return {p.name: p for p in trace.pods}


def models(pod: Pod) -> tuple[str, ...] | None:
    aff = pod.spec.affinity
    if aff is None or aff.node_affinity is None or aff.node_affinity.required is None:
        return None
    (term,) = aff.node_affinity.required.terms
    (req,) = term.match_expressions
    assert (req.key, req.operator) == (LABEL_GPU_MODEL, "In")
    return req.values


def seconds(text: str) -> float:
    return parse_duration(text) / NANOS


# --------------------------------------------------------------------------- the shared trace


@pytest.fixture(scope="module")
def sample() -> TraceObjects:
    """The first 200 pods of the shared trace, all nodes."""
    return load(openb_paths(), limit=200)


def test_shared_trace_sample_counts(sample: TraceObjects) -> None:
    pods = csv_rows(OPENB_PODS)[:200]
    assert len(sample.nodes) == len(csv_rows(OPENB_NODES)) == 1523
    assert [p.name for p in sample.pods] == [r["name"] for r in pods]
    assert sample.stats.pods_in_trace == 8152
    assert sample.stats.pods == 200
    fractional = sum(1 for r in pods if int(r["num_gpu"]) and int(r["gpu_milli"]) < 1000)
    assert fractional > 0
    assert f"{fractional} with fractional GPU rounded up to 1" in sample.stats.line()
    assert [pc.name for pc in sample.priority_classes] == [
        "openb-ls",
        "openb-guaranteed",
        "openb-burstable",
        "openb-be",
    ]


def test_shared_trace_nodes_match_csv(sample: TraceObjects) -> None:
    for row, node in zip(csv_rows(OPENB_NODES), sample.nodes, strict=True):
        assert node.name == row["sn"]
        expected = {"cpu": int(row["cpu_milli"]), "memory": int(row["memory_mib"]) * MIB}
        expected["pods"] = 110
        if int(row["gpu"]):
            expected[GPU] = int(row["gpu"])
        assert dict(node.allocatable) == expected
        assert dict(node.labels) == ({LABEL_GPU_MODEL: row["model"]} if row["model"] else {})


def test_shared_trace_pods_match_csv(sample: TraceObjects) -> None:
    for row, pod in zip(csv_rows(OPENB_PODS)[:200], sample.pods, strict=True):
        num_gpu = int(row["num_gpu"])
        expected = {"cpu": int(row["cpu_milli"]), "memory": int(row["memory_mib"]) * MIB}
        if num_gpu:
            expected[GPU] = num_gpu  # fractional shares round up to one GPU
        assert pod_requests(pod.spec) == expected, pod.name
        assert pod.priority_class_name == f"openb-{row['qos'].lower()}"
        assert pod.labels[LABEL_QOS] == row["qos"]
        spec_models = tuple(m for m in row["gpu_spec"].split("|") if m)
        assert models(pod) == (spec_models or None)
        ann = pod.annotations
        created = int(row["creation_time"])
        assert ann[CREATE_AT] == format_duration(created * NANOS)
        if row["scheduled_time"]:
            run = int(row["deletion_time"]) - int(row["scheduled_time"])
            assert seconds(ann[RUN_FOR]) == run
            assert DELETE_AT not in ann
        else:
            assert seconds(ann[DELETE_AT]) == int(row["deletion_time"])
            assert RUN_FOR not in ann
        fractional = num_gpu and int(row["gpu_milli"]) < 1000
        assert ann.get(GPU_MILLI) == (row["gpu_milli"] if fractional else None)


def test_shared_trace_priorities_after_admission() -> None:
    trace = load(openb_paths(), limit=200)
    qos = {r["name"]: r["qos"] for r in csv_rows(OPENB_PODS)[:200]}
    scenario = build_scenario(trace)
    pods = [i.obj for i in scenario.items if isinstance(i.obj, Pod)]
    assert len(pods) == 200
    for pod in pods:
        assert pod.priority == PRIORITY[qos[pod.name]]


def test_shared_trace_directory_equals_files() -> None:
    files = openb_paths()
    a = load(files, limit=50)
    b = load([str(Path(files[0]).parent)], limit=50)
    c = load(list(reversed(files)), limit=50)
    for other in (b, c):
        assert [p.name for p in other.pods] == [p.name for p in a.pods]
        assert [n.name for n in other.nodes] == [n.name for n in a.nodes]


# --------------------------------------------------------------------------- synthetic traces

NODES = [
    node_row("cpu-0"),
    node_row("t4-0", gpu=2, model="T4"),
    node_row("v100-0", gpu=8, model="V100M32"),
    node_row("v100-1", gpu=8, model="V100M16"),
]


def test_gpu_spec_becomes_required_node_affinity(tmp_path: Path) -> None:
    paths = write_trace(
        tmp_path,
        NODES,
        [
            pod_row("any-gpu", num_gpu=1),
            pod_row("v100", num_gpu=8, gpu_spec="V100M16|V100M32|V100M16"),
            pod_row("t4", num_gpu=1, gpu_spec="T4"),
        ],
    )
    pods = by_name(load(paths))
    assert models(pods["any-gpu"]) is None
    assert models(pods["v100"]) == ("V100M16", "V100M32")
    assert models(pods["t4"]) == ("T4",)


@pytest.mark.parametrize(
    ("mode", "names", "gpu_requests", "milli_requests", "note"),
    [
        pytest.param(
            "round-up",
            ["whole", "shared", "cpu-only"],
            [1, 1, 0],
            [0, 0, 0],
            "1 with fractional GPU rounded up to 1",
            id="round-up: a 300-milli pod asks for one whole GPU",
        ),
        pytest.param(
            "skip",
            ["whole", "cpu-only"],
            [1, 0],
            [0, 0],
            "1 with fractional GPU skipped",
            id="skip: the fractional pod is left out and counted",
        ),
        pytest.param(
            "milli",
            ["whole", "shared", "cpu-only"],
            [1, 0, 0],
            [1000, 300, 0],
            "1 with fractional GPU as openb.alibaba.com/gpu-milli",
            id="milli: shares become a per-node milli-GPU resource",
        ),
    ],
)
def test_gpu_share_modes(
    tmp_path: Path,
    mode: str,
    names: list[str],
    gpu_requests: list[int],
    milli_requests: list[int],
    note: str,
) -> None:
    paths = write_trace(
        tmp_path,
        NODES[:2],
        [
            pod_row("whole", num_gpu=1),
            pod_row("shared", num_gpu=1, gpu_milli=300),
            pod_row("cpu-only"),
        ],
    )
    trace = load(paths, gpu_share=mode)
    assert [p.name for p in trace.pods] == names
    reqs = [pod_requests(p.spec) for p in trace.pods]
    assert [r.get(GPU, 0) for r in reqs] == gpu_requests
    assert [r.get(GPU_MILLI, 0) for r in reqs] == milli_requests
    assert note in trace.stats.line()
    t4 = trace.nodes[1].allocatable
    assert t4.get(GPU_MILLI) == (2000 if mode == "milli" else None)
    if mode != "skip":
        assert by_name(trace)["shared"].annotations[GPU_MILLI] == "300"


@pytest.mark.parametrize(
    ("scale", "create_at", "run_for", "delete_at"),
    [
        pytest.param(Fraction(1), "1h0m0s", "50s", "1h0m10s", id="scale 1 keeps trace seconds"),
        pytest.param(
            Fraction(1, 1000), "3.6s", "50ms", "3.61s", id="scale 0.001 compresses 1000 times"
        ),
        pytest.param(Fraction(2), "2h0m0s", "1m40s", "2h0m20s", id="scale 2 stretches"),
        pytest.param(
            Fraction(1, 3),
            "20m0s",
            "16.666666667s",
            "20m3.333333333s",
            id="scale 1/3 rounds half up to the nanosecond",
        ),
    ],
)
def test_time_scale(
    tmp_path: Path, scale: Fraction, create_at: str, run_for: str, delete_at: str
) -> None:
    paths = write_trace(
        tmp_path,
        NODES[:1],
        [
            pod_row("ran", created=3600, scheduled=3610, deleted=3660),
            pod_row("gave-up", created=3600, scheduled="", deleted=3610),
        ],
    )
    trace = load(paths, time_scale=scale)
    pods = by_name(trace)
    assert pods["ran"].annotations[CREATE_AT] == create_at
    assert pods["ran"].annotations[RUN_FOR] == run_for
    assert pods["gave-up"].annotations[DELETE_AT] == delete_at
    assert trace.last_event == parse_duration(pods["ran"].annotations[CREATE_AT]) + round(
        60 * scale * NANOS
    )


def test_pod_without_deletion_time_runs_to_the_end(tmp_path: Path) -> None:
    paths = write_trace(tmp_path, NODES[:1], [pod_row("forever", created=5)])
    (pod,) = load(paths).pods
    assert dict(pod.annotations) == {CREATE_AT: "5s"}


def test_no_deletions_drops_run_for_and_delete_at(tmp_path: Path) -> None:
    paths = write_trace(
        tmp_path,
        NODES[:1],
        [
            pod_row("ran", created=1, deleted=9),
            pod_row("gave-up", created=2, scheduled="", deleted=3),
        ],
    )
    trace = load(paths, no_deletions=True)
    assert [dict(p.annotations) for p in trace.pods] == [{CREATE_AT: "1s"}, {CREATE_AT: "2s"}]
    assert "deletion times ignored" in trace.stats.line()


def _many(tmp_path: Path, pods: int = 40, nodes: int = 20) -> list[str]:
    return write_trace(
        tmp_path,
        [node_row(f"n-{i:02d}") for i in range(nodes)],
        [pod_row(f"p-{i:02d}", created=i) for i in range(pods)],
    )


@pytest.mark.parametrize(
    ("options", "count"),
    [
        pytest.param({"sample": 10}, 10, id="sample N keeps N pods"),
        pytest.param({"sample": Fraction(1, 4)}, 10, id="sample fraction keeps round(f*n)"),
        pytest.param({"sample": 100}, 40, id="sample larger than the trace keeps all"),
        pytest.param({"limit": 12}, 12, id="limit keeps the first N"),
        pytest.param({"limit": 20, "sample": Fraction(1, 2)}, 10, id="limit then sample"),
    ],
)
def test_sampling_counts_and_order(tmp_path: Path, options: dict[str, Any], count: int) -> None:
    names = [p.name for p in load(_many(tmp_path), **options).pods]
    assert len(names) == count
    assert names == sorted(names)  # kept pods stay in trace order
    if "limit" in options:
        assert all(int(n[2:]) < options["limit"] for n in names)


def test_sampling_is_seeded(tmp_path: Path) -> None:
    paths = _many(tmp_path)

    def pick(seed: int) -> list[str]:
        return [p.name for p in load(paths, sample=10, seed=seed).pods]

    assert pick(1) == pick(1)
    assert pick(1) != pick(2)


@pytest.mark.parametrize(
    ("options", "count", "copies"),
    [
        pytest.param({"node_fraction": Fraction(1, 2)}, 10, 0, id="node fraction 0.5 keeps half"),
        pytest.param({"node_fraction": Fraction(3, 2)}, 30, 10, id="node fraction 1.5 adds copies"),
        pytest.param({"drop_nodes": 3}, 17, 0, id="drop-nodes removes N"),
        pytest.param({"drop_nodes": 50}, 0, 0, id="drop-nodes beyond the count removes all"),
        pytest.param(
            {"node_fraction": Fraction(1, 2), "drop_nodes": 2}, 8, 0, id="fraction then drop"
        ),
    ],
)
def test_node_resizing(tmp_path: Path, options: dict[str, Any], count: int, copies: int) -> None:
    trace = load(_many(tmp_path), **options)
    names = [n.name for n in trace.nodes]
    assert len(names) == count
    assert len(set(names)) == count
    assert sum("-copy-" in n for n in names) == copies
    originals = [n for n in names if "-copy-" not in n]
    assert originals == sorted(originals)
    assert trace.stats.nodes == count
    assert trace.stats.nodes_in_trace == 20


def test_node_choices_are_seeded_and_independent_of_pod_sampling(tmp_path: Path) -> None:
    paths = _many(tmp_path)

    def nodes(seed: int, **extra: Any) -> list[str]:
        return [n.name for n in load(paths, seed=seed, drop_nodes=5, **extra).nodes]

    assert nodes(3) == nodes(3)
    assert nodes(3) != nodes(4)
    assert nodes(3) == nodes(3, sample=5)


def test_copies_keep_labels_and_allocatable(tmp_path: Path) -> None:
    paths = write_trace(tmp_path, [NODES[1]], [pod_row("p")])
    trace = load(paths, node_fraction=Fraction(3))
    assert [n.name for n in trace.nodes] == ["t4-0", "t4-0-copy-1", "t4-0-copy-2"]
    for n in trace.nodes:
        assert dict(n.labels) == {LABEL_GPU_MODEL: "T4"}
        assert dict(n.allocatable) == dict(trace.nodes[0].allocatable)


def test_priorities_and_max_pods_options(tmp_path: Path) -> None:
    paths = write_trace(tmp_path, NODES[:1], [pod_row("a", qos="BE"), pod_row("b", qos="Batch")])
    trace = load(
        paths,
        priorities={"BE": TierPriority(0, "Never"), "Batch": TierPriority(-5)},
        max_pods=20,
    )
    classes = {pc.name: (pc.value, pc.preemption_policy) for pc in trace.priority_classes}
    assert classes == {
        "openb-ls": (10000, "PreemptLowerPriority"),
        "openb-guaranteed": (8000, "PreemptLowerPriority"),
        "openb-burstable": (6000, "PreemptLowerPriority"),
        "openb-be": (0, "Never"),
        "openb-batch": (-5, "PreemptLowerPriority"),
    }
    assert trace.nodes[0].allocatable["pods"] == 20
    assert [p.priority_class_name for p in trace.pods] == ["openb-be", "openb-batch"]


def test_format_is_registered() -> None:
    fmt = get_format("openb")
    assert fmt.name == "openb"
    with pytest.raises(InputError, match='unknown trace format "nope"; known formats: openb'):
        get_format("nope")


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("pods", "message"),
    [
        pytest.param(
            [pod_row("p", qos="Gold")],
            'pods.csv: line 2: qos: unknown tier "Gold"; map it to a priority with '
            "--priorities Gold=VALUE",
            id="an unknown QoS tier names the option that maps it",
        ),
        pytest.param(
            [pod_row("p", cpu=-1)],
            'pods.csv: line 2: cpu_milli: "-1": must not be negative',
            id="a negative amount",
        ),
        pytest.param(
            [pod_row("p", created=10, scheduled=20, deleted=15)],
            "pods.csv: line 2: deletion_time: 15 is before scheduled_time 20",
            id="deleted before scheduled",
        ),
        pytest.param(
            [pod_row("p", created=10, scheduled=5)],
            "pods.csv: line 2: scheduled_time: 5 is before creation_time 10",
            id="scheduled before created",
        ),
        pytest.param(
            [pod_row("p"), pod_row("p")],
            'pods.csv: line 3: name: pod "p" already defined on line 2',
            id="a pod twice",
        ),
        pytest.param(
            [pod_row("Bad_Name")],
            'pods.csv: line 2: name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain',
            id="a name Kubernetes rejects",
        ),
        pytest.param(
            [pod_row("p", num_gpu=1, gpu_milli=1500)],
            'pods.csv: line 2: gpu_milli: "1500": more than one GPU (1000)',
            id="a share above one GPU",
        ),
        pytest.param(
            [{**pod_row("p"), "creation_time": ""}],
            "pods.csv: line 2: creation_time: required value is empty",
            id="a missing creation time",
        ),
        pytest.param(
            [{**pod_row("p"), "cpu_milli": "1.5"}],
            'pods.csv: line 2: cpu_milli: "1.5": not an integer',
            id="a fraction where an integer is expected",
        ),
    ],
)
def test_bad_rows(tmp_path: Path, pods: list[dict[str, Any]], message: str) -> None:
    paths = write_trace(tmp_path, NODES[:1], pods)
    with pytest.raises(InputError) as err:
        load(paths)
    assert message in str(err.value).replace(str(tmp_path) + "/", "")


def test_missing_column_and_wrong_files(tmp_path: Path) -> None:
    paths = write_trace(tmp_path, NODES[:1], [pod_row("p")])
    text = Path(paths[1]).read_text().replace("gpu_spec", "spec")
    Path(paths[1]).write_text(text)
    with pytest.raises(InputError, match=r"pods.csv: missing column\(s\): gpu_spec"):
        load(paths)
    with pytest.raises(InputError, match="openb needs one node list"):
        load([paths[0], paths[0]])
    with pytest.raises(InputError, match="openb needs two CSV files"):
        load([paths[0]])
    with pytest.raises(InputError, match="no such file or directory"):
        load([paths[0], str(tmp_path / "missing.csv")])


def test_unknown_gpu_share_mode(tmp_path: Path) -> None:
    paths = write_trace(tmp_path, NODES[:1], [pod_row("p")])
    with pytest.raises(InputError, match='--gpu-share: unknown mode "half"'):
        load(paths, gpu_share="half")
