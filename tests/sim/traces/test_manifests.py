"""Trace objects as manifests (sim/traces/manifests.py): they load back through the
ordinary loader to equal objects, the fast writer writes what PyYAML writes, and the
same trace + seed gives byte-identical files."""

from __future__ import annotations

import dataclasses
import io
from collections.abc import Mapping
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.api.load import load_objects, read_documents
from kubesched.api.types import (
    Affinity,
    Node,
    NodeAffinity,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Pod,
    PodAffinity,
    PodSpec,
    PreferredSchedulingTerm,
    PriorityClass,
    Toleration,
)
from kubesched.sim.traces import ImportOptions, TraceObjects, load_trace
from kubesched.sim.traces.manifests import (
    dump,
    manifest,
    trace_manifests,
    write_directory,
    write_yaml,
)
from tests.builders import make_node, make_pod
from tests.sim.traces.data import node_row, openb_paths, pod_row, write_trace


def normal(x: Any) -> Any:
    """A comparable structure of api objects (specs compare by identity otherwise)."""
    if isinstance(x, Pod | Node):
        return (type(x).__name__, {s: normal(getattr(x, s)) for s in type(x).__slots__})
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return (
            type(x).__name__,
            {f.name: normal(getattr(x, f.name)) for f in dataclasses.fields(x)},
        )
    if isinstance(x, Mapping):
        return {k: normal(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [normal(v) for v in x]
    return x


def objects(trace: TraceObjects) -> list[Any]:
    return [*trace.priority_classes, *trace.nodes, *trace.pods]


def read_back(path: str) -> list[Any]:
    return [o.obj for o in load_objects(read_documents([path])).objects]


def _synthetic(tmp_path: Path, **options: Any) -> TraceObjects:
    paths = write_trace(
        tmp_path,
        [node_row("cpu-0"), node_row("gpu-0", gpu=8, model="V100M32")],
        [
            pod_row("a", num_gpu=1, gpu_milli=250, gpu_spec="V100M32|T4", created=3, deleted=9),
            pod_row("b", qos="BE", mem=0, created=4, scheduled="", deleted=5),
            pod_row("c", qos="Burstable", cpu=1500, created=7),
        ],
    )
    return load_trace("openb", paths, ImportOptions(**options))


@pytest.mark.parametrize(
    "options",
    [
        pytest.param({}, id="round-up defaults"),
        pytest.param({"gpu_share": "milli"}, id="milli-GPU scalar resource"),
        pytest.param(
            {"time_scale": Fraction(1, 7), "node_fraction": Fraction(2)}, id="scaled, copies"
        ),
    ],
)
def test_synthetic_round_trip(tmp_path: Path, options: dict[str, Any]) -> None:
    trace = _synthetic(tmp_path, **options)
    out = tmp_path / "all.yaml"
    with out.open("w") as f:
        write_yaml(trace, f)
    assert normal(read_back(str(out))) == normal(objects(trace))


def test_shared_trace_round_trip_through_a_directory(tmp_path: Path) -> None:
    trace = load_trace("openb", openb_paths(), ImportOptions(limit=300))
    written = write_directory(trace, str(tmp_path / "out"))
    assert [Path(p).name for p in written] == [
        "priorityclasses.yaml",
        "nodes.yaml",
        "pods.yaml",
    ]
    back = read_back(str(tmp_path / "out"))  # read in name order: nodes, pods, classes
    by_kind: dict[str, list[Any]] = {"PriorityClass": [], "Node": [], "Pod": []}
    for obj in back:
        by_kind[type(obj).__name__].append(obj)
    assert normal(by_kind["PriorityClass"]) == normal(trace.priority_classes)
    assert normal(by_kind["Node"]) == normal(trace.nodes)
    assert normal(by_kind["Pod"]) == normal(trace.pods)


def test_same_seed_gives_byte_identical_output(tmp_path: Path) -> None:
    paths = openb_paths()

    def render(seed: int) -> str:
        opts = ImportOptions(seed=seed, sample=Fraction(1, 20), drop_nodes=100)
        buf = io.StringIO()
        write_yaml(load_trace("openb", paths, opts), buf)
        return buf.getvalue()

    first = render(7)
    assert render(7) == first
    assert render(8) != first


def _pyyaml(docs: list[Any]) -> str:
    return yaml.dump_all(
        docs,
        Dumper=yaml.SafeDumper,
        sort_keys=False,
        default_flow_style=False,
        explicit_start=True,
        allow_unicode=True,
        width=1 << 16,
    )


def test_fast_writer_writes_what_pyyaml_writes(tmp_path: Path) -> None:
    trace = _synthetic(tmp_path, gpu_share="milli")
    docs = [
        *trace_manifests(trace),
        manifest(make_node("n1").label("odd", "yes").label("empty", "").obj()),
        {"k": {"spaced": " x ", "colon": "a: b", "hash": "x #y", "n": None, "t": True}},
        {"list": [{"a": 1}, [1, 2], "true", "1.5", "~", "-", "0x10", "2024-01-01", "a:"]},
        {"empty": {}, "none": [], "num": -3},
    ]
    ours = io.StringIO()
    dump(docs, ours)
    assert ours.getvalue() == _pyyaml(docs)


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("it's", id="a quote inside"),
        pytest.param("a\nb\n", id="line breaks"),
        pytest.param("tab\there", id="a tab"),
        pytest.param("Zürich ✓", id="non-ASCII"),
        pytest.param("emoji \U0001f600", id="outside the BMP"),
        pytest.param("bell\x07 nel\x85 ls\u2028 bom\ufeff", id="controls and line separators"),
        pytest.param('back\\slash "quoted"', id="backslash and double quotes"),
        pytest.param("", id="empty"),
        pytest.param(" lead", id="a leading space"),
    ],
)
def test_fast_writer_output_loads_back(text: str) -> None:
    docs = [{text: {"v": text, "l": [text]}}]
    ours = io.StringIO()
    dump(docs, ours)
    assert list(yaml.safe_load_all(ours.getvalue())) == docs


def test_general_objects_round_trip(tmp_path: Path) -> None:
    """The renderer also writes node affinity preferences, selectors, tolerations,
    taints and unschedulable nodes, which other importers may produce."""
    term = NodeSelectorTerm(
        match_expressions=(NodeSelectorRequirement("zone", "NotIn", ("a", "b")),),
        match_fields=(NodeSelectorRequirement("metadata.name", "In", ("n1",)),),
    )
    base = make_pod("p").req_map({"cpu": "250m", "memory": "1Gi", "example.com/fpga": 2}).obj()
    base.spec = PodSpec(
        containers=base.spec.containers,
        node_selector={"disk": "ssd"},
        affinity=Affinity(
            node_affinity=NodeAffinity(
                required=NodeSelector((term,)),
                preferred=(PreferredSchedulingTerm(5, term),),
            )
        ),
        tolerations=(Toleration("k", "Exists", "", "NoExecute", 30), Toleration(operator="Exists")),
        scheduler_name="other",
        termination_grace_period_seconds=0,
    )
    base.priority_class_name = "high"
    node = (
        make_node("n1")
        .capacity(cpu="4", memory="3Gi", pods=10)
        .taint("gpu", "true")
        .taint("x", "", "NoExecute")
        .unschedulable()
        .obj()
    )
    objs: list[PriorityClass | Node | Pod] = [
        PriorityClass("high", 7, global_default=True, preemption_policy="Never"),
        node,
        base,
    ]
    out = tmp_path / "general.yaml"
    with out.open("w") as f:
        dump((manifest(o) for o in objs), f)
    assert normal(read_back(str(out))) == normal(objs)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        pytest.param(
            {"affinity": Affinity(pod_affinity=PodAffinity())}, "podAffinity", id="pod affinity"
        ),
        pytest.param({"host_network": True}, "hostNetwork", id="host network"),
        pytest.param({"overhead": {"cpu": 10}}, "overhead", id="pod overhead"),
    ],
)
def test_fields_it_cannot_write_are_refused(change: dict[str, Any], field: str) -> None:
    pod = make_pod("p").req(cpu="1").obj()
    pod.spec = dataclasses.replace(pod.spec, **change)
    with pytest.raises(ValueError, match=f"pod default/p: not rendered: {field}"):
        manifest(pod)
