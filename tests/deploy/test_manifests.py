"""deploy/: kubesched run with exactly the permissions deploy/rbac.yaml grants and
the configuration deploy/config.yaml holds, as a real process against an API
server (the double) that enforces them: it schedules and preempts, and binds a
pod's volumes, without a 403."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.live.apiserver_double import ApiServerDouble, Auth, RealClock
from kubesched.live.apiserver_double.auth import Rule
from tests.live.cluster_state import (
    claim,
    node,
    pod,
    priority_class,
    storage_class,
    wait_for,
    with_claim,
)

pytest.importorskip("kubernetes")

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
USER = "system:serviceaccount:kube-system:kubesched"


def manifests(name: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all((DEPLOY / name).read_text()) if d]


def granted_rules() -> list[Rule]:
    """The rules of the roles bound to the ServiceAccount (namespaced for a Role)."""
    docs = manifests("rbac.yaml")
    roles = {(d["kind"], d["metadata"]["name"]): d for d in docs if d["kind"].endswith("Role")}
    out = []
    for b in (d for d in docs if d["kind"].endswith("Binding")):
        (subject,) = b["subjects"]
        assert f"system:serviceaccount:{subject['namespace']}:{subject['name']}" == USER
        role = roles[(b["roleRef"]["kind"], b["roleRef"]["name"])]
        ns = (role["metadata"]["namespace"],) if role["kind"] == "Role" else ()
        for r in role["rules"]:
            out.append(
                Rule(
                    tuple(r["verbs"]),
                    tuple(r["apiGroups"]),
                    tuple(r["resources"]),
                    tuple(r.get("resourceNames", ())),
                    ns,
                )
            )
    return out


def test_the_deployment_runs_kubesched_with_the_config_and_the_service_account() -> None:
    (deployment,) = manifests("deployment.yaml")
    spec = deployment["spec"]["template"]["spec"]
    assert spec["serviceAccountName"] == "kubesched"
    (container,) = spec["containers"]
    assert container["args"][:1] == ["run"]
    (config_map,) = manifests("config.yaml")
    assert spec["volumes"][0]["configMap"]["name"] == config_map["metadata"]["name"]


def test_kubesched_schedules_preempts_and_binds_volumes_with_only_the_granted_permissions(
    tmp_path: Path,
) -> None:
    (config_map,) = manifests("config.yaml")
    config = tmp_path / "config.yaml"
    config.write_text(config_map["data"]["config.yaml"])
    auth = Auth(tokens={"sa": USER}, rules={USER: granted_rules()})
    api = ApiServerDouble(clock=RealClock(), auth=auth, volume_controller=True).start()
    try:
        api.create(node("n1", "2"))
        api.create(priority_class("high", 1000))
        low = pod("low-1", "1500m", "n1")
        low["spec"]["terminationGracePeriodSeconds"] = 0
        api.create(low)
        api.create(storage_class("fast", "example.com/csi"))
        api.create(claim("data", "fast"))
        kc = api.write_kubeconfig(tmp_path / "kc", token="sa")
        proc = subprocess.Popen(
            [
                *(sys.executable, "-m", "kubesched.cli.main", "run"),
                *("--kubeconfig", str(kc), "--config", str(config), "--seed", "0"),
                *("--status-address", "127.0.0.1:0"),
            ],
            stderr=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
        )
        try:
            urgent = pod("urgent", "1", priority_class="high")
            urgent["spec"]["schedulerName"] = "kubesched"
            api.create(urgent)

            def bound() -> bool:
                got = api.get("v1", "Pod", "urgent", "default")
                return got is not None and got["spec"].get("nodeName") == "n1"

            wait_for(bound)
            assert api.get("v1", "Pod", "low-1", "default") is None  # preempted
            # VolumeBinding's PreBind updates the claim (selected-node): the
            # volume-scheduler part of upstream's permissions.
            stateful = with_claim(pod("stateful", "500m"), "data")
            stateful["spec"]["schedulerName"] = "kubesched"
            api.create(stateful)

            def claim_bound() -> bool:
                got = api.get("v1", "Pod", "stateful", "default")
                pvc = api.get("v1", "PersistentVolumeClaim", "data", "default")
                return (
                    got is not None
                    and got["spec"].get("nodeName") == "n1"
                    and pvc is not None
                    and pvc["status"].get("phase") == "Bound"
                )

            wait_for(claim_bound)
            lease = api.get("coordination.k8s.io/v1", "Lease", "kubesched", "kube-system")
            assert lease is not None and lease["spec"]["holderIdentity"]
            proc.send_signal(signal.SIGTERM)
            _, err = proc.communicate(timeout=20)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    finally:
        api.stop()
    assert proc.returncode == 0, err
    assert "forbidden" not in err.lower(), err
