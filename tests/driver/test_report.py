"""The SimulationResult document (driver/report.py) built from a RunRecord alone, with
the fields docs/result-format.md describes."""

from __future__ import annotations

from kubesched.api.storage import PersistentVolume, PersistentVolumeClaim
from kubesched.driver.events import ObjectAdded, PodAdded, PodDeleted, PodUpdated
from kubesched.driver.record import RunRecord
from kubesched.driver.report import build_result
from kubesched.framework.events import EventResource
from tests.builders import make_pod

S = 1_000_000_000


class Clock:
    t = 0

    def now(self) -> int:
        return self.t


def test_result_of_a_record() -> None:
    clock = Clock()
    record = RunRecord(clock)
    web = make_pod("web", "b").uid("u-web").priority(5).obj()
    gone = make_pod("gone", "a").uid("u-gone").obj()
    term = make_pod("term", "a").uid("u-term").node("n1").obj()
    PodAdded(web).to(record)
    PodAdded(gone).to(record)
    PodAdded(term).to(record)
    clock.t = 2 * S
    bound = web.copy()
    bound.node_name = "n1"
    PodUpdated(web, bound).to(record)
    record.deleting("u-gone", "Deleted")
    PodDeleted(gone).to(record)
    record.deleting("u-term", "Preempted")  # terminating: no deletedAt, so no reason yet
    record.preemption(bound, "n1", [term, gone], 0)
    record.controller_event("ReplicaSet", "b", "rs", "Warning", "FailedCreate", "quota")

    doc = build_result(record, seed=7, end_time=3 * S, metrics={"m": 1})

    assert [(p["namespace"], p["name"]) for p in doc["pods"]] == [
        ("a", "gone"),
        ("a", "term"),
        ("b", "web"),
    ]
    by_name = {p["name"]: p for p in doc["pods"]}
    assert by_name["web"]["scheduledAt"] == 2.0
    assert by_name["web"]["nodeName"] == "n1"
    assert (by_name["gone"]["deletedAt"], by_name["gone"]["deletionReason"]) == (2.0, "Deleted")
    assert (by_name["term"]["deletedAt"], by_name["term"]["deletionReason"]) == (None, None)
    assert doc["preemptions"] == [
        {
            "time": 2.0,
            "preemptor": "b/web",
            "node": "n1",
            "victims": ["a/gone", "a/term"],  # sorted
            "numPDBViolations": 0,
        }
    ]
    assert doc["events"] == [
        {
            "time": 2.0,
            "type": "Warning",
            "reason": "FailedCreate",
            "object": "b/rs",
            "related": None,
            "message": "quota",
            "kind": "ReplicaSet",
        }
    ]
    assert (doc["seed"], doc["simulatedSeconds"], doc["metrics"]) == (7, 3.0, {"m": 1})
    assert "persistentVolumeClaims" not in doc  # no storage object: the original shape


def test_storage_objects_appear_once_one_existed() -> None:
    record = RunRecord(Clock())
    ObjectAdded(EventResource.PERSISTENT_VOLUME, PersistentVolume("pv-b")).to(record)
    ObjectAdded(EventResource.PERSISTENT_VOLUME, PersistentVolume("pv-a")).to(record)
    pvc = PersistentVolumeClaim("data", volume_name="pv-a", phase="Bound")
    ObjectAdded(EventResource.PERSISTENT_VOLUME_CLAIM, pvc).to(record)
    doc = build_result(record, seed=0, end_time=0, metrics={})
    assert [v["name"] for v in doc["persistentVolumes"]] == ["pv-a", "pv-b"]
    assert [(c["name"], c["volumeName"]) for c in doc["persistentVolumeClaims"]] == [
        ("data", "pv-a")
    ]
