"""InterPodAffinity end to end: ``kubesched simulate -o json`` (click's CliRunner) on
examples/affinity/anti-affinity-preemption.yaml and variants of it.

Until the lead adds InterPodAffinity to ``kubesched.scheduler.registry``, the
``registered`` fixture adds it to the registry the scenario loader and runner
use (``kubesched.sim.scenario.in_tree_registry``); ``test_plugin_is_registered``
is a strict xfail that starts passing (and must then lose its mark) once the
registration lands.

Expected values follow upstream's rules (spec R5.2.3: an anti-affinity
rejection, either side, is Unschedulable and so a preemption candidate; a pod
affinity rejection is UnschedulableAndUnresolvable and never is).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

import kubesched.sim.scenario as scenario_module
from kubesched.cli.main import main
from kubesched.plugins.interpodaffinity import InterPodAffinity
from kubesched.scheduler.registry import in_tree_registry

EXAMPLE = (
    Path(__file__).resolve().parents[2] / "examples" / "affinity" / "anti-affinity-preemption.yaml"
)
Doc = dict[str, Any]
NODE_SELECTOR = "1 node(s) didn't match Pod's node affinity/selector"


def test_plugin_is_registered() -> None:
    assert in_tree_registry().get("InterPodAffinity") is InterPodAffinity


def with_plugin(feature_gates: Mapping[str, bool] | None = None) -> Mapping[str, Any]:
    """The in-tree registry plus InterPodAffinity (what the lead's registration adds)."""
    return {**in_tree_registry(feature_gates), "InterPodAffinity": InterPodAffinity}


@pytest.fixture(autouse=True)
def registered(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    # The scenario loader (supported plugins) and runner (registry) both read this name.
    monkeypatch.setattr(scenario_module, "in_tree_registry", with_plugin)
    yield


def simulate(path: Path, *extra: str) -> Doc:
    result = CliRunner().invoke(main, ["simulate", "-f", str(path), "-o", "json", *extra])
    assert result.exit_code == 0, result.output
    doc: Doc = json.loads(result.stdout)
    return doc


def variant(tmp_path: Path, edit: Callable[[dict[str, Doc]], None]) -> Path:
    docs = [d for d in yaml.safe_load_all(EXAMPLE.read_text()) if d]
    edit({d["metadata"]["name"]: d for d in docs if d["kind"] == "Pod"})
    out = tmp_path / EXAMPLE.name
    out.write_text(yaml.safe_dump_all(docs))
    return out


def pods(doc: Doc) -> dict[str, Doc]:
    return {p["name"]: p for p in doc["pods"]}


def failed(doc: Doc, obj: str) -> list[tuple[float, str]]:
    return [
        (e["time"], e["message"])
        for e in doc["events"]
        if e["reason"] == "FailedScheduling" and e["object"] == obj
    ]


def anti_to(app: str) -> Doc:
    return {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {
                    "labelSelector": {"matchLabels": {"app": app}},
                    "topologyKey": "kubernetes.io/hostname",
                }
            ]
        }
    }


@pytest.fixture(scope="module")
def example_doc() -> Iterator[Doc]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(scenario_module, "in_tree_registry", with_plugin)
        yield simulate(EXAMPLE)


def test_anti_affinity_victim_is_chosen_by_preemption(example_doc: Doc) -> None:
    """node-b: NodeAffinity UAU, not a candidate. node-a: anti-affinity Unschedulable,
    a candidate; of its two lower-priority pods only cache-a conflicts, web-a is
    reprieved."""
    assert example_doc["preemptions"] == [
        {
            "time": 10.0,
            "preemptor": "default/db",
            "node": "node-a",
            "victims": ["default/cache-a"],
            "numPDBViolations": 0,
        }
    ]
    # Preemption succeeded, so PostFilter adds nothing to the FitError message.
    assert failed(example_doc, "default/db") == [
        (
            10.0,
            f"0/2 nodes are available: {NODE_SELECTOR}, 1 node(s) didn't match pod "
            "anti-affinity rules.",
        )
    ]


def test_anti_affinity_victim_terminates_then_preemptor_binds(example_doc: Doc) -> None:
    """cache-a keeps blocking node-a during its 5 s grace period; db binds at 15 s."""
    p = pods(example_doc)
    assert (p["cache-a"]["deletedAt"], p["cache-a"]["deletionReason"]) == (15.0, "Preempted")
    assert (p["web-a"]["phase"], p["web-a"]["deletedAt"]) == ("Running", None)
    assert (p["db"]["phase"], p["db"]["nodeName"], p["db"]["scheduledAt"]) == (
        "Running",
        "node-a",
        15.0,
    )
    victims = example_doc["metrics"]["scheduler_preemption_victims"]
    assert (victims["count"], victims["sum"]) == (1, 1)


def test_exact_path_gives_the_same_run(example_doc: Doc) -> None:
    exact = simulate(EXAMPLE, "--exact")
    assert exact["pods"] == example_doc["pods"]
    assert exact["preemptions"] == example_doc["preemptions"]
    assert exact["events"] == example_doc["events"]


def test_victims_own_anti_affinity_makes_it_the_victim(tmp_path: Path) -> None:
    """The symmetric case: db has no affinity, cache-a's required anti-affinity
    rejects app=db ("existing pods anti-affinity", Unschedulable): same victim."""

    def edit(p: dict[str, Doc]) -> None:
        del p["db"]["spec"]["affinity"]
        p["cache-a"]["spec"]["affinity"] = anti_to("db")

    doc = simulate(variant(tmp_path, edit))
    assert [(x["node"], x["victims"]) for x in doc["preemptions"]] == [
        ("node-a", ["default/cache-a"])
    ]
    assert failed(doc, "default/db") == [
        (
            10.0,
            f"0/2 nodes are available: {NODE_SELECTOR}, 1 node(s) didn't satisfy existing "
            "pods anti-affinity rules.",
        )
    ]
    assert pods(doc)["db"]["nodeName"] == "node-a"


def test_required_affinity_rejection_is_not_preempted(tmp_path: Path) -> None:
    """A pod affinity rejection is UnschedulableAndUnresolvable: no candidate node, no
    victim. When a matching pod appears on node-a (20 s), the queueing hint moves db
    back and it binds there."""

    def edit(p: dict[str, Doc]) -> None:
        p["db"]["spec"]["affinity"] = {
            "podAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "labelSelector": {"matchLabels": {"app": "frontend"}},
                        "topologyKey": "kubernetes.io/hostname",
                    }
                ]
            }
        }

    path = variant(tmp_path, edit)
    doc = simulate(path)
    assert doc["preemptions"] == []
    assert failed(doc, "default/db") == [
        (
            10.0,
            f"0/2 nodes are available: {NODE_SELECTOR}, 1 node(s) didn't match pod "
            "affinity rules. no new claims to deallocate, "
            "preemption: 0/2 nodes are available: 2 Preemption is not helpful "
            "for scheduling.",
        )
    ]
    assert pods(doc)["db"]["phase"] == "Pending"

    docs = [d for d in yaml.safe_load_all(path.read_text()) if d]
    docs.append(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": "frontend",
                "labels": {"app": "frontend"},
                "annotations": {"kubesched.io/create-at": "20s"},
            },
            "spec": {"nodeName": "node-a", "containers": [{"name": "f", "image": "nginx"}]},
        }
    )
    path.write_text(yaml.safe_dump_all(docs))
    doc = simulate(path)
    assert doc["preemptions"] == []
    assert (pods(doc)["db"]["nodeName"], pods(doc)["db"]["scheduledAt"]) == ("node-a", 20.0)
