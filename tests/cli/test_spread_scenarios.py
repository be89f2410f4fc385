"""PodTopologySpread end to end through ``kubesched simulate``.

Until the lead adds PodTopologySpread to ``kubesched.scheduler.registry``, the
``spread`` fixture puts it into the registry the simulator builds (the
default profile then enables it, as upstream's does, at Score weight 2);
``test_pod_topology_spread_is_in_the_in_tree_registry`` is a strict xfail
that starts failing once the registration lands, so the fixture can go.

Expectations are derived from upstream v1.36 rules, written next to them:
- spread-preemption.yaml (spec R5.2.3): a DoNotSchedule constraint that is not
  met is Unschedulable, so DefaultPreemption considers that node; a missing
  topology label is UnschedulableAndUnresolvable, so it does not.
- daemonset-style.yaml: with hostname maxSkew 1 the global minimum stays 0
  while some node has no replica, so no node takes a second one.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from kubesched.cli.main import main
from kubesched.plugins.podtopologyspread import PodTopologySpread
from kubesched.runtime.framework import PluginFactory
from kubesched.scheduler.registry import in_tree_registry
from kubesched.sim import scenario

ROOT = Path(__file__).resolve().parents[2]
SPREAD_PREEMPTION = ROOT / "examples" / "spread" / "spread-preemption.yaml"
DAEMONSET_STYLE = ROOT / "examples" / "spread" / "daemonset-style.yaml"
ZONE = "topology.kubernetes.io/zone"


@pytest.fixture
def spread(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The simulator's registry with PodTopologySpread (if not registered yet)."""
    if PodTopologySpread.name not in in_tree_registry():

        def registry(gates: Mapping[str, bool] | None = None) -> Mapping[str, PluginFactory]:
            return {**in_tree_registry(gates), PodTopologySpread.name: PodTopologySpread}

        monkeypatch.setattr(scenario, "in_tree_registry", registry)
    yield


def test_pod_topology_spread_is_in_the_in_tree_registry() -> None:
    assert in_tree_registry()[PodTopologySpread.name] is PodTopologySpread


def run(*args: str, stdin: str | None = None) -> dict[str, Any]:
    result = CliRunner().invoke(main, ["simulate", *args, "-o", "json"], input=stdin)
    assert result.exit_code == 0, result.stderr
    doc: dict[str, Any] = json.loads(result.stdout)
    return doc


def pods_by_name(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {p["name"]: p for p in doc["pods"]}


def events(doc: dict[str, Any], reason: str, obj: str) -> list[str]:
    return [e["message"] for e in doc["events"] if e["reason"] == reason and e["object"] == obj]


def docs(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


def dump(items: list[dict[str, Any]]) -> str:
    return yaml.safe_dump_all(items, sort_keys=False)


# --------------------------------------------------------------------------- spread + preemption


@pytest.mark.usefixtures("spread")
def test_spread_fixed_by_preempting_the_low_priority_pod_in_the_crowded_zone() -> None:
    """zone-a-1 fails the spread (2 + 1 - 1 > 1, Unschedulable), zone-b-1 the taint
    (UnschedulableAndUnresolvable). Removing every lower-priority pod of zone-a-1
    satisfies the spread; reprieving by priority keeps web-a (zone a back to 1)
    and batch (not selected), while web-low would make zone a 2 again: it is
    the only victim. web-new binds when web-low is gone after its 30 s grace."""
    doc = run("-f", str(SPREAD_PREEMPTION))
    assert doc["preemptions"] == [
        {
            "time": 10.0,
            "preemptor": "default/web-new",
            "node": "zone-a-1",
            "victims": ["default/web-low"],
            "numPDBViolations": 0,
        }
    ]
    assert events(doc, "FailedScheduling", "default/web-new") == [
        "0/2 nodes are available: 1 node(s) didn't match pod topology spread constraints, "
        "1 node(s) had untolerated taint(s)."
    ]
    pods = pods_by_name(doc)
    assert (pods["web-new"]["phase"], pods["web-new"]["nodeName"]) == ("Running", "zone-a-1")
    assert pods["web-new"]["scheduledAt"] == 40.0
    assert (pods["web-low"]["deletedAt"], pods["web-low"]["deletionReason"]) == (40.0, "Preempted")
    for name in ("web-a", "batch", "web-b"):
        assert pods[name]["phase"] == "Running" and pods[name]["deletedAt"] is None


@pytest.mark.usefixtures("spread")
def test_without_the_spread_constraint_nothing_is_preempted() -> None:
    """Control: the same cluster, web-new without its constraint fits zone-a-1 at once."""
    items = docs(SPREAD_PREEMPTION)
    for d in items:
        if d["kind"] == "Pod" and d["metadata"]["name"] == "web-new":
            del d["spec"]["topologySpreadConstraints"]
    doc = run("-f", "-", stdin=dump(items))
    assert doc["preemptions"] == []
    web_new = pods_by_name(doc)["web-new"]
    assert (web_new["nodeName"], web_new["scheduledAt"]) == ("zone-a-1", 10.0)


@pytest.mark.usefixtures("spread")
def test_missing_topology_label_is_unresolvable_and_not_preempted_for() -> None:
    """A constraint on a key no node has: zone-a-1 fails it with
    UnschedulableAndUnresolvable (zone-b-1 its taint, checked first), so
    preemption finds no candidate."""
    items = docs(SPREAD_PREEMPTION)
    for d in items:
        if d["kind"] == "Pod" and d["metadata"]["name"] == "web-new":
            d["spec"]["topologySpreadConstraints"][0]["topologyKey"] = "rack"
    doc = run("-f", "-", stdin=dump(items))
    assert doc["preemptions"] == []
    assert pods_by_name(doc)["web-new"]["phase"] == "Pending"
    assert events(doc, "FailedScheduling", "default/web-new") == [
        "0/2 nodes are available: 1 node(s) didn't match pod topology spread constraints "
        "(missing required label), 1 node(s) had untolerated taint(s). "
        "no new claims to deallocate, preemption: 0/2 nodes "
        "are available: 2 Preemption is not helpful for scheduling."
    ]


# --------------------------------------------------------------------------- DaemonSet-style


@pytest.mark.usefixtures("spread")
def test_daemonset_style_example_puts_one_replica_per_node() -> None:
    doc = run("-f", str(DAEMONSET_STYLE))
    nodes = {
        d["metadata"]["name"]: d["metadata"]["labels"][ZONE]
        for d in docs(DAEMONSET_STYLE)
        if d["kind"] == "Node"
    }
    placed = [p["nodeName"] for p in doc["pods"]]
    assert sorted(placed) == sorted(nodes)
    assert Counter(nodes[n] for n in placed) == {"zone-a": 4, "zone-b": 4, "zone-c": 4}


def daemonset_cluster(n_nodes: int, replicas: int) -> str:
    items: list[dict[str, Any]] = [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": f"n{i:02d}", "labels": {ZONE: f"z{i % 5}"}},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
        }
        for i in range(n_nodes)
    ]
    items.append(
        {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {"name": "ds"},
            "spec": {
                "replicas": replicas,
                "selector": {"matchLabels": {"app": "ds"}},
                "template": {
                    "metadata": {"labels": {"app": "ds"}},
                    "spec": {
                        "topologySpreadConstraints": [
                            {
                                "maxSkew": 1,
                                "topologyKey": "kubernetes.io/hostname",
                                "whenUnsatisfiable": "DoNotSchedule",
                                "labelSelector": {"matchLabels": {"app": "ds"}},
                            }
                        ],
                        "containers": [
                            {
                                "name": "c",
                                "image": "agent",
                                "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}},
                            }
                        ],
                    },
                },
            },
        }
    )
    return dump(items)


@pytest.mark.usefixtures("spread")
def test_fifty_nodes_get_exactly_one_replica_each() -> None:
    doc = run("-f", "-", stdin=daemonset_cluster(50, 50))
    placed = Counter(p["nodeName"] for p in doc["pods"])
    assert len(placed) == 50 and set(placed.values()) == {1}
    assert doc["preemptions"] == []


@pytest.mark.usefixtures("spread")
def test_one_replica_more_than_nodes_goes_to_a_node_with_one() -> None:
    """The 51st replica: every node has 1, so the minimum is 1 and 1 + 1 - 1 <= 1
    everywhere; exactly one node ends with two replicas."""
    doc = run("-f", "-", stdin=daemonset_cluster(50, 51))
    placed = Counter(p["nodeName"] for p in doc["pods"])
    assert len(placed) == 50 and sorted(placed.values()) == [1] * 49 + [2]


@pytest.mark.usefixtures("spread")
def test_spread_runs_are_reproducible() -> None:
    a = run("-f", str(SPREAD_PREEMPTION), "--seed", "7")
    b = run("-f", str(SPREAD_PREEMPTION), "--seed", "7")
    assert a == b
