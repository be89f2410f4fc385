"""``what_would_fit``: the change it proposes is the smallest that admits the pod.

Each case runs a small cluster where one pod stays Pending, asks what would
make it fit, then applies the proposed change to the input and runs again:
with the change the pod is scheduled on the proposed node; with a change
one unit smaller (resources) or with one of the proposed changes left out
(taints, labels) it stays Pending."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import yaml

from kubesched.explain.counterfactual import what_would_fit
from kubesched.sim.scenario import load_scenario, run_scenario


def node(
    name: str, cpu: str, labels: dict[str, str] | None = None, taints: list[Any] | None = None
) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels or {}},
        "spec": {"taints": taints or []},
        "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "10"}},
    }


def pod(name: str, cpu: str, on: str = "", **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "containers": [{"name": "c", "image": "pause", "resources": {"requests": {"cpu": cpu}}}],
        **spec,
    }
    if on:
        body["nodeName"] = on
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": "web"}},
        "spec": body,
    }


def run(tmp_path: Path, objects: list[dict[str, Any]]) -> tuple[Any, dict[str, Any]]:
    f = tmp_path / "in.yaml"
    f.write_text(yaml.safe_dump_all(objects))
    result = run_scenario(load_scenario([str(f)], stdin=io.StringIO()))
    return result, {p["name"]: p for p in result.result()["pods"]}


def fits(tmp_path: Path, objects: list[dict[str, Any]], name: str) -> dict[str, Any]:
    result, pods = run(tmp_path, objects)
    assert pods[name]["nodeName"] is None
    scheduler = result.simulation.scheduler
    p = result.cluster.get_pod("default", name)
    fwk = scheduler.profiles[p.spec.scheduler_name]
    return what_would_fit(fwk, p, scheduler.cache.table.ordered_infos())


def placed(tmp_path: Path, objects: list[dict[str, Any]], name: str) -> str | None:
    _, pods = run(tmp_path, objects)
    got: str | None = pods[name]["nodeName"]
    return got


def test_missing_resources_are_the_smallest_addition(tmp_path: Path) -> None:
    # a: 2 CPU with 1.5 used (0.5 short of 1: a quarter of it);
    # b: 4 CPU with 3.8 used (0.8 short: a fifth of it) -> b is nearer.
    objects = [
        node("a", "2"),
        node("b", "4"),
        pod("used-a", "1500m", on="a"),
        pod("used-b", "3800m", on="b"),
        pod("new", "1"),
    ]
    f = fits(tmp_path, objects, "new")
    assert f["fitsNow"] == []
    assert [n["node"] for n in f["nearest"]] == ["b", "a"]
    [blocker] = f["nearest"][0]["blockers"]
    assert blocker["plugin"] == "NodeResourcesFit"
    assert blocker["missing"] == [{"resource": "cpu", "missing": "800m"}]
    assert f["nearest"][1]["blockers"][0]["missing"] == [{"resource": "cpu", "missing": "500m"}]
    # Applying it: b with 800m more fits; 799m more does not.
    objects[1] = node("b", "4800m")
    assert placed(tmp_path, objects, "new") == "b"
    objects[1] = node("b", "4799m")
    objects[0] = node("a", "2499m")  # a stays 1m short as well
    assert placed(tmp_path, objects, "new") is None


def test_taints_and_labels_to_change(tmp_path: Path) -> None:
    taints = [
        {"key": "dedicated", "value": "db", "effect": "NoSchedule"},
        {"key": "maintenance", "effect": "NoExecute"},
        {"key": "soft", "effect": "PreferNoSchedule"},
    ]
    objects = [
        node("tainted", "4", labels={"disk": "ssd"}, taints=taints),
        node("plain", "4", labels={"disk": "hdd"}),
        pod("new", "1", nodeSelector={"disk": "ssd"}),
    ]
    f = fits(tmp_path, objects, "new")
    by_node = {n["node"]: n["blockers"] for n in f["nearest"]}
    [taint] = by_node["tainted"]
    assert taint["plugin"] == "TaintToleration"
    assert taint["untoleratedTaints"] == ["dedicated=db:NoSchedule", "maintenance:NoExecute"]
    [selector] = by_node["plain"]
    assert selector["plugin"] == "NodeAffinity"
    assert selector["nodeSelector"] == [{"label": "disk=ssd", "node": "hdd"}]
    # Tolerating both listed taints admits it there; one alone does not.
    tolerate = [
        {"key": "dedicated", "operator": "Equal", "value": "db", "effect": "NoSchedule"},
        {"key": "maintenance", "operator": "Exists", "effect": "NoExecute"},
    ]
    objects[2] = pod("new", "1", nodeSelector={"disk": "ssd"}, tolerations=tolerate)
    assert placed(tmp_path, objects, "new") == "tainted"
    objects[2] = pod("new", "1", nodeSelector={"disk": "ssd"}, tolerations=tolerate[:1])
    assert placed(tmp_path, objects, "new") is None
    # Giving plain the label admits it there.
    objects[2] = pod("new", "1", nodeSelector={"disk": "ssd"})
    objects[1] = node("plain", "4", labels={"disk": "ssd"})
    assert placed(tmp_path, objects, "new") == "plain"


def test_topology_spread_skew(tmp_path: Path) -> None:
    # zone x holds two web pods, zone y none but y's node is full: the new web pod
    # would make skew 3 - 0 = 3 > 1 in x, and lacks cpu in y.
    spread = [
        {
            "maxSkew": 1,
            "topologyKey": "zone",
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": "web"}},
        }
    ]
    objects = [
        node("x1", "4", labels={"zone": "x"}),
        node("y1", "1", labels={"zone": "y"}),
        pod("w1", "100m", on="x1"),
        pod("w2", "100m", on="x1"),
        pod("new", "2", topologySpreadConstraints=spread),
    ]
    f = fits(tmp_path, objects, "new")
    by_node = {n["node"]: n["blockers"] for n in f["nearest"]}
    [skew] = by_node["x1"]
    assert skew["plugin"] == "PodTopologySpread"
    assert skew["constraints"] == [
        {
            "topologyKey": "zone",
            "domain": "x",
            "matchingPods": 2,
            "fewestInADomain": 0,
            "skew": 3,
            "maxSkew": 1,
        }
    ]
    assert [b["plugin"] for b in by_node["y1"]] == ["NodeResourcesFit"]
    # maxSkew 3 admits it in x.
    spread[0]["maxSkew"] = 3
    assert placed(tmp_path, objects, "new") == "x1"
