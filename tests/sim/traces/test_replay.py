"""Trace objects straight into a scenario (sim/traces/replay.py): the same timeline,
admission and decisions as loading the rendered manifests with load_scenario."""

from __future__ import annotations

import re
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.api.errors import InputError
from kubesched.api.types import NANOS, Pod
from kubesched.sim.scenario import Scenario, load_scenario, run_scenario
from kubesched.sim.traces import ImportOptions, TraceObjects, load_trace
from kubesched.sim.traces.manifests import write_yaml
from kubesched.sim.traces.replay import (
    HORIZON_MARGIN,
    build_scenario,
    horizon,
    loaded_objects,
)
from tests.sim.traces.data import node_row, openb_paths, pod_row, write_trace


def timeline(s: Scenario) -> list[tuple[Any, ...]]:
    out = []
    for i in s.items:
        o = i.obj
        prio = (
            (o.priority, o.preemption_policy, o.priority_class_name) if isinstance(o, Pod) else ()
        )
        out.append((i.kind, o.name, i.create_at, i.delete_at, i.run_for, i.order, *prio))
    return out


def via_yaml(trace: TraceObjects, tmp_path: Path) -> Scenario:
    path = tmp_path / "trace.yaml"
    with path.open("w") as f:
        write_yaml(trace, f)
    return load_scenario([str(path)])


def contended(tmp_path: Path) -> list[str]:
    """Two GPU nodes and pods of every tier competing for them over time."""
    pods = []
    for i in range(24):
        qos = ("BE", "LS", "Burstable", "Guaranteed")[i % 4]
        pods.append(
            pod_row(
                f"p-{i:02d}",
                qos=qos,
                cpu=2000,
                num_gpu=1 + i % 2,
                gpu_milli=500 if i % 5 == 0 else None,
                created=i * 7,
                scheduled="" if i % 6 == 5 else i * 7 + 1,
                deleted=i * 7 + 200,
            )
        )
    nodes = [node_row("g-0", cpu=8000, gpu=4, model="T4"), node_row("g-1", cpu=8000, gpu=2)]
    return write_trace(tmp_path, nodes, pods)


def test_timeline_equals_load_scenario_of_the_manifests(tmp_path: Path) -> None:
    paths = contended(tmp_path)
    options = ImportOptions(time_scale=Fraction(1, 3))
    direct = build_scenario(load_trace("openb", paths, options))
    loaded = via_yaml(load_trace("openb", paths, options), tmp_path)
    assert timeline(direct) == timeline(loaded)
    assert [pc.name for pc in direct.classes] == [pc.name for pc in loaded.classes]


def test_shared_trace_timeline_equals_load_scenario(tmp_path: Path) -> None:
    paths = openb_paths()
    options = ImportOptions(limit=400, drop_nodes=1400, seed=3)
    direct = build_scenario(load_trace("openb", paths, options))
    loaded = via_yaml(load_trace("openb", paths, options), tmp_path)
    assert timeline(direct) == timeline(loaded)


@pytest.mark.parametrize("seed", [pytest.param(0, id="seed 0"), pytest.param(5, id="seed 5")])
def test_replay_decisions_equal_load_scenario(tmp_path: Path, seed: int) -> None:
    paths = contended(tmp_path)
    trace = load_trace("openb", paths, ImportOptions())
    direct = run_scenario(build_scenario(trace), seed=seed, horizon=horizon(trace))
    loaded = run_scenario(
        via_yaml(load_trace("openb", paths, ImportOptions()), tmp_path),
        seed=seed,
        horizon=horizon(trace),
    )
    assert direct.record.preemptions, "the case should exercise preemption"
    assert direct.result() == loaded.result()


def test_base_scenario_keeps_its_objects_first(tmp_path: Path) -> None:
    extra = tmp_path / "extra.yaml"
    extra.write_text(
        yaml.safe_dump_all(
            [
                {
                    "apiVersion": "scheduling.k8s.io/v1",
                    "kind": "PriorityClass",
                    "metadata": {"name": "mine"},
                    "value": 5,
                },
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {"name": "own"},
                    "spec": {
                        "priorityClassName": "openb-ls",
                        "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}],
                    },
                },
            ]
        )
    )
    paths = write_trace(tmp_path, [node_row("n")], [pod_row("t", qos="BE")])
    # load_scenario admits the -f pods before the trace joins: they cannot name a
    # class only the trace defines.
    with pytest.raises(InputError, match="no PriorityClass with name openb-ls was found"):
        build_scenario(
            load_trace("openb", paths, ImportOptions()), base=load_scenario([str(extra)])
        )
    extra.write_text(extra.read_text().replace("openb-ls", "mine"))
    scenario = build_scenario(
        load_trace("openb", paths, ImportOptions()), base=load_scenario([str(extra)])
    )
    others = [(i.kind, i.obj.name, i.order) for i in scenario.items if i.kind != "PriorityClass"]
    assert others == [
        ("Pod", "own", 1),
        ("Node", "n", 6),  # after the base's 2 objects and the trace's 4 classes
        ("Pod", "t", 7),
    ]
    names = [pc.name for pc in scenario.classes]
    assert names.index("mine") < names.index("openb-be")


def test_a_class_defined_twice_is_an_error(tmp_path: Path) -> None:
    extra = tmp_path / "extra.yaml"
    extra.write_text(
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\n"
        "metadata: {name: openb-be}\nvalue: 1\n"
    )
    paths = write_trace(tmp_path, [node_row("n")], [pod_row("t", qos="BE")])
    with pytest.raises(
        InputError, match=re.escape('priorityclasses.scheduling.k8s.io "openb-be" already exists')
    ):
        build_scenario(
            load_trace("openb", paths, ImportOptions()), base=load_scenario([str(extra)])
        )


def test_horizon_follows_the_last_event(tmp_path: Path) -> None:
    paths = write_trace(
        tmp_path,
        [node_row("n")],
        [
            pod_row("a", created=10, deleted=500),
            pod_row("b", created=900, scheduled="", deleted=950),
        ],
    )
    trace = load_trace("openb", paths, ImportOptions())
    assert trace.last_event == 950 * NANOS
    assert horizon(trace) == 950 * NANOS + HORIZON_MARGIN  # a day beyond a short trace
    assert horizon(trace, margin=0) == 950 * NANOS
    long = load_trace("openb", paths, ImportOptions(time_scale=Fraction(1000)))
    assert horizon(long) == 2 * 950_000 * NANOS  # as long again as a trace longer than a day


def test_loaded_objects_in_manifest_order(tmp_path: Path) -> None:
    paths = write_trace(tmp_path, [node_row("n")], [pod_row("a")])
    items = loaded_objects(load_trace("openb", paths, ImportOptions()))
    assert [(i.kind, i.index) for i in items] == [
        ("PriorityClass", 0),
        ("PriorityClass", 1),
        ("PriorityClass", 2),
        ("PriorityClass", 3),
        ("Node", 4),
        ("Pod", 5),
    ]
    assert items[5].annotations["kubesched.io/create-at"] == "0s"
