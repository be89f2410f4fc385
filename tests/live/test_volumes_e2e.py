"""Live mode binds pods with unbound claims: ``LiveRun`` (informers, binding
threads) against the API-server double with its fake PV controller and
provisioner. VolumeBinding's PreBind pre-binds a static volume or asks for
provisioning, then waits (off the scheduling thread) until the claims are bound;
without a controller the wait ends at ``bindTimeoutSeconds`` or at the stop."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from kubesched.framework.config import SchedulerConfig
from kubesched.live.apiserver_double import ApiServerDouble
from kubesched.live.run import LIVE_SCHEDULER_NAME
from kubesched.scheduler.config import API_VERSION, KIND, parse_config
from kubesched.scheduler.registry import in_tree_registry
from tests.live.cluster_state import (
    claim,
    double,
    live_run,
    node,
    pod,
    storage_class,
    volume,
    wait_for,
    with_claim,
)

pytest.importorskip("kubernetes")

Obj = dict[str, Any]
SELECTED_NODE = "volume.kubernetes.io/selected-node"


def config(bind_timeout: int | None = None) -> SchedulerConfig:
    profile: Obj = {"schedulerName": LIVE_SCHEDULER_NAME}
    if bind_timeout is not None:
        profile["pluginConfig"] = [
            {"name": "VolumeBinding", "args": {"bindTimeoutSeconds": bind_timeout}}
        ]
    return parse_config(
        {"apiVersion": API_VERSION, "kind": KIND, "profiles": [profile]},
        supported=in_tree_registry().keys(),
    )


def ours(name: str, claim_name: str) -> Obj:
    p = with_claim(pod(name, "500m"), claim_name)
    p["spec"]["schedulerName"] = LIVE_SCHEDULER_NAME
    return p


def get(api: ApiServerDouble, kind: str, name: str, namespace: str = "") -> Obj:
    got = api.get("v1", kind, name, namespace)
    assert got is not None
    return got


def node_of(api: ApiServerDouble, name: str) -> str | None:
    return get(api, "Pod", name, "default")["spec"].get("nodeName")


def notes(api: ApiServerDouble, reason: str) -> list[tuple[str, str]]:
    return [
        (body["regarding"]["name"], body["note"])
        for _, path, _, body in list(api.requests)
        if path.endswith("/events") and isinstance(body, dict) and body.get("reason") == reason
    ]


def test_a_provisioned_claim_and_a_static_volume_are_bound_with_their_pods(
    tmp_path: Path,
) -> None:
    with double(volume_controller=True) as api:
        api.create(node("n1", "2"))
        api.create(node("n2", "2", zone="b"))
        api.create(storage_class("fast", "example.com/csi"))
        api.create(storage_class("local", "kubernetes.io/no-provisioner"))
        pv = volume("pv-a", "local")
        pv["spec"]["nodeAffinity"] = {
            "required": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": "kubernetes.io/hostname", "operator": "In", "values": ["n2"]}
                        ]
                    }
                ]
            }
        }
        api.create(pv)
        api.create(claim("dyn", "fast"))
        api.create(claim("static", "local"))
        api.create(ours("p-dyn", "dyn"))
        api.create(ours("p-static", "static"))
        with live_run(api, tmp_path, config()):
            wait_for(lambda: bool(node_of(api, "p-dyn") and node_of(api, "p-static")), 15)
        assert node_of(api, "p-static") == "n2"  # the volume's node affinity
        dyn = get(api, "PersistentVolumeClaim", "dyn", "default")
        assert dyn["metadata"]["annotations"][SELECTED_NODE] == node_of(api, "p-dyn")
        assert dyn["spec"]["volumeName"] == f"pvc-{dyn['metadata']['uid']}"
        assert dyn["status"]["phase"] == "Bound"
        static = get(api, "PersistentVolumeClaim", "static", "default")
        assert static["spec"]["volumeName"] == "pv-a"
        assert static["status"]["phase"] == "Bound"
        bound_pv = get(api, "PersistentVolume", "pv-a")
        assert bound_pv["spec"]["claimRef"]["uid"] == static["metadata"]["uid"]
        assert bound_pv["metadata"]["annotations"] == {
            "pv.kubernetes.io/bound-by-controller": "yes"
        }
        assert sorted(name for name, _ in notes(api, "Scheduled")) == ["p-dyn", "p-static"]
        assert notes(api, "FailedScheduling") == []


def test_a_claim_nobody_binds_fails_at_the_bind_timeout(tmp_path: Path) -> None:
    with double() as api:  # no PV controller
        api.create(node("n1", "2"))
        api.create(storage_class("fast", "example.com/csi"))
        api.create(claim("dyn", "fast"))
        api.create(ours("p-dyn", "dyn"))
        with live_run(api, tmp_path, config(bind_timeout=1)):
            wait_for(lambda: bool(notes(api, "FailedScheduling")), 15)
        assert notes(api, "FailedScheduling")[0] == (
            "p-dyn",
            'running PreBind plugin "VolumeBinding": binding volumes: context deadline exceeded',
        )
        assert node_of(api, "p-dyn") is None
        dyn = get(api, "PersistentVolumeClaim", "dyn", "default")
        assert dyn["metadata"]["annotations"] == {SELECTED_NODE: "n1"}


def test_a_stop_ends_a_binding_that_waits_for_its_volumes(tmp_path: Path) -> None:
    with double() as api:  # no PV controller: the wait would last 600 s
        api.create(node("n1", "2"))
        api.create(storage_class("fast", "example.com/csi"))
        api.create(claim("dyn", "fast"))
        api.create(ours("p-dyn", "dyn"))

        def annotated() -> bool:
            pvc = get(api, "PersistentVolumeClaim", "dyn", "default")
            return SELECTED_NODE in (pvc["metadata"].get("annotations") or {})

        with live_run(api, tmp_path, config()) as run:
            wait_for(annotated, 15)
            time.sleep(0.2)
            start = time.monotonic()
            run.stop()
        assert time.monotonic() - start < 5.0
        assert node_of(api, "p-dyn") is None


def test_bindings_waiting_for_volumes_do_not_hold_up_other_bindings(tmp_path: Path) -> None:
    """More pods wait for their claims than there are binding threads (4): a
    pod without volumes is still bound at once, as upstream's goroutine per
    binding would."""
    with double() as api:  # no PV controller: the waits last until the stop
        api.create(node("n1", "8"))
        api.create(storage_class("fast", "example.com/csi"))
        waiting = [f"w{i}" for i in range(6)]
        for name in waiting:
            api.create(claim(f"c-{name}", "fast"))
            api.create(ours(name, f"c-{name}"))

        def all_annotated() -> bool:
            return all(
                SELECTED_NODE
                in (
                    get(api, "PersistentVolumeClaim", f"c-{n}", "default")["metadata"].get(
                        "annotations"
                    )
                    or {}
                )
                for n in waiting
            )

        with live_run(api, tmp_path, config()) as run:
            wait_for(all_annotated, 15)
            plain = pod("plain", "100m")
            plain["spec"]["schedulerName"] = LIVE_SCHEDULER_NAME
            api.create(plain)
            wait_for(lambda: node_of(api, "plain") == "n1", 10)
            assert run.scheduler.binder is not None
            assert run.scheduler.binder.threads == 4 + len(waiting)  # one more per wait
        assert all(node_of(api, n) is None for n in waiting)
