"""Volume scenarios end to end: ``kubesched simulate -o json`` on
examples/volumes/ and on small inputs written here (click's CliRunner).

Expected values follow upstream v1.36's rules, step by step in the comments.
FailedScheduling messages are those of the default profile: DynamicResources'
PostFilter adds "no new claims to deallocate, " when its PreFilter ran, and
answers "not found" when an earlier PreFilter (a volume plugin's) rejected the
pod before DynamicResources' PreFilter could run.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from kubesched.cli.main import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "volumes"
LOCAL_PV = EXAMPLES / "local-pv-preemption.yaml"
WFFC = EXAMPLES / "wait-for-first-consumer.yaml"

Doc = dict[str, Any]

NODES = """
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: n2}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
"""


def simulate(path: Path, *extra: str) -> Doc:
    result = CliRunner().invoke(main, ["simulate", "-f", str(path), "-o", "json", *extra])
    assert result.exit_code == 0, result.output
    doc: Doc = json.loads(result.stdout)
    return doc


def simulate_text(tmp_path: Path, text: str, *extra: str) -> Doc:
    f = tmp_path / "input.yaml"
    f.write_text(text)
    return simulate(f, *extra)


def pods(doc: Doc) -> dict[str, Doc]:
    return {p["name"]: p for p in doc["pods"]}


def messages(doc: Doc, reason: str, obj: str) -> list[tuple[float, str]]:
    return [
        (e["time"], e["message"])
        for e in doc["events"]
        if e["reason"] == reason and e["object"] == obj
    ]


# ----------------------------------------------------------------- local PV preemption


def test_a_pod_pinned_by_its_local_volume_preempts_on_that_node_only() -> None:
    """db-0 (2 CPUs, claim bound to local-a on worker-a): worker-a lacks CPU
    (Insufficient cpu, Unschedulable) and worker-b fails VolumeBinding's node
    affinity check (UnschedulableAndUnresolvable), so preemption evaluates
    worker-a alone, evicts batch-a there, and db-0 binds after the 30 s grace."""
    doc = simulate(LOCAL_PV)
    assert messages(doc, "FailedScheduling", "default/db-0") == [
        (
            0.0,
            "0/2 nodes are available: 1 Insufficient cpu, "
            "1 node(s) had volume node affinity conflict.",
        )
    ]
    assert [(p["preemptor"], p["node"], p["victims"]) for p in doc["preemptions"]] == [
        ("default/db-0", "worker-a", ["default/batch-a"])
    ]
    got = pods(doc)
    assert (got["db-0"]["nodeName"], got["db-0"]["scheduledAt"]) == ("worker-a", 30.0)
    assert got["batch-b"]["deletionReason"] is None
    assert doc["persistentVolumes"][0]["claim"] == "default/data"
    assert simulate(LOCAL_PV, "--exact") == doc


# ------------------------------------------------------------ WaitForFirstConsumer


def test_wait_for_first_consumer_claim_is_provisioned_where_the_pod_goes() -> None:
    doc = simulate(WFFC)
    got = pods(doc)
    # Only node-b admits provisioning (allowedTopologies zone-b): node-a gets
    # "didn't find available persistent volumes to bind", so web goes to node-b.
    assert got["web"]["nodeName"] == "node-b"
    claim = doc["persistentVolumeClaims"][0]
    assert (claim["phase"], claim["selectedNode"]) == ("Bound", "node-b")
    [volume] = doc["persistentVolumes"]
    assert volume["name"] == claim["volumeName"] and volume["name"].startswith("pvc-")
    assert volume["provisionedBy"] == "ebs.csi.aws.com"
    assert volume["nodeAffinity"] == {
        "required": {
            "nodeSelectorTerms": [
                {
                    "matchExpressions": [
                        {
                            "key": "topology.kubernetes.io/zone",
                            "operator": "In",
                            "values": ["zone-b"],
                        }
                    ]
                }
            ]
        }
    }
    # reader finds the claim bound: the volume's node affinity admits node-b only.
    assert (got["reader"]["nodeName"], got["reader"]["scheduledAt"]) == ("node-b", 10.0)


def test_wait_for_first_consumer_without_a_place_to_provision(tmp_path: Path) -> None:
    text = WFFC.read_text().replace("values: [zone-b]", "values: [zone-c]")
    doc = simulate_text(tmp_path, text)
    assert messages(doc, "FailedScheduling", "default/web")[0] == (
        0.0,
        "0/2 nodes are available: 2 node(s) didn't find available persistent volumes "
        "to bind. no new claims to deallocate, preemption: 0/2 nodes are available: "
        "2 Preemption is not helpful for scheduling.",
    )
    assert doc["persistentVolumeClaims"][0]["phase"] == "Pending"


# ---------------------------------------------------------------- missing claims


def test_missing_claim_message(tmp_path: Path) -> None:
    """VolumeRestrictions' PreFilter looks the claim up first: UnschedulableAndUnresolvable
    with the lister's NotFound error; PreFilter stops there, so DynamicResources'
    PostFilter finds no state ("not found") and preemption never runs."""
    doc = simulate_text(
        tmp_path,
        NODES
        + """---
apiVersion: v1
kind: Pod
metadata: {name: orphan}
spec:
  containers: [{name: c, image: x}]
  volumes: [{name: data, persistentVolumeClaim: {claimName: nope}}]
""",
    )
    assert messages(doc, "FailedScheduling", "default/orphan") == [
        (0.0, '0/2 nodes are available: persistentvolumeclaim "nope" not found. not found')
    ]
    assert doc["metrics"]["scheduler_preemption_attempts_total"] == 0


def test_claim_created_later_lets_the_pod_schedule(tmp_path: Path) -> None:
    """The PersistentVolumeClaim Add event requeues the pod (VolumeRestrictions'
    hint: one of its claims)."""
    doc = simulate_text(
        tmp_path,
        NODES
        + """---
apiVersion: v1
kind: Pod
metadata: {name: app}
spec:
  containers: [{name: c, image: x}]
  volumes: [{name: data, persistentVolumeClaim: {claimName: data}}]
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv-1}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  hostPath: {path: /data}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: data
  annotations: {kubesched.io/create-at: 15s}
spec:
  storageClassName: ""
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
""",
    )
    assert pods(doc)["app"]["scheduledAt"] == 15.0
    assert doc["persistentVolumeClaims"][0]["volumeName"] == "pv-1"


# ------------------------------------------------------------ Immediate binding

IMMEDIATE = (
    NODES
    + """---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: standard
  annotations: {storageclass.kubernetes.io/is-default-class: "true"}
provisioner: kubernetes.io/no-provisioner
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: logs}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
---
apiVersion: v1
kind: Pod
metadata: {name: app}
spec:
  containers: [{name: c, image: x}]
  volumes: [{name: logs, persistentVolumeClaim: {claimName: logs}}]
---
apiVersion: v1
kind: PersistentVolume
metadata:
  name: nfs-1
  annotations: {kubesched.io/create-at: 20s}
spec:
  capacity: {storage: 2Gi}
  accessModes: [ReadWriteOnce, ReadWriteMany]
  storageClassName: standard
  nfs: {server: nfs.example.com, path: /exports/1}
"""
)


def test_unbound_immediate_claim_waits_for_the_pv_controller(tmp_path: Path) -> None:
    """``logs`` gets the default class (admission) and stays Pending: its class
    cannot provision and no volume matches. VolumeBinding's PreFilter rejects app
    (UnschedulableAndUnresolvable). At 20 s nfs-1 appears, the PV controller binds
    the claim, and the claim's update requeues app."""
    doc = simulate_text(tmp_path, IMMEDIATE)
    assert messages(doc, "FailedScheduling", "default/app") == [
        (
            0.0,
            "0/2 nodes are available: pod has unbound immediate PersistentVolumeClaims. not found",
        )
    ]
    assert pods(doc)["app"]["scheduledAt"] == 20.0
    [claim] = doc["persistentVolumeClaims"]
    assert (claim["storageClassName"], claim["volumeName"], claim["phase"]) == (
        "standard",
        "nfs-1",
        "Bound",
    )


# ------------------------------------------------------------------ ReadWriteOncePod

RWOP = (
    """apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: vip}
value: 1000
---
"""
    + NODES
    + """---
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv-1}
spec:
  capacity: {storage: 5Gi}
  accessModes: [ReadWriteOncePod]
  storageClassName: ""
  csi: {driver: csi.example.com, volumeHandle: vol-1}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: exclusive}
spec:
  storageClassName: ""
  accessModes: [ReadWriteOncePod]
  resources: {requests: {storage: 5Gi}}
---
apiVersion: v1
kind: Pod
metadata: {name: holder}
spec:
  containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]
  volumes: [{name: d, persistentVolumeClaim: {claimName: exclusive}}]
---
apiVersion: v1
kind: Pod
metadata:
  name: intruder
  annotations: {kubesched.io/create-at: 5s}
spec:
  containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]
  volumes: [{name: d, persistentVolumeClaim: {claimName: exclusive}}]
---
apiVersion: v1
kind: Pod
metadata:
  name: vip
  annotations: {kubesched.io/create-at: 10s}
spec:
  priorityClassName: vip
  containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]
  volumes: [{name: d, persistentVolumeClaim: {claimName: exclusive}}]
"""
)

RWOP_REASON = (
    "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode "
    "already in-use by another pod"
)


@pytest.mark.parametrize("exact", [False, True], ids=["vector", "exact"])
def test_read_write_once_pod_claim_preemption(tmp_path: Path, exact: bool) -> None:
    """intruder (priority 0) finds the claim in use on every node (Unschedulable)
    and no lower-priority victim anywhere. vip (1000) preempts the holder: the dry
    run's RemovePod frees the claim only on the holder's node, so that node is
    the only candidate; vip binds there when the holder is gone (30 s grace),
    ahead of intruder, which then finds the claim taken by vip."""
    doc = simulate_text(tmp_path, RWOP, *(["--exact"] if exact else []))
    got = pods(doc)
    holder_node = got["holder"]["nodeName"]
    none_found = "2 No preemption victims found for incoming pod."
    assert messages(doc, "FailedScheduling", "default/intruder") == [
        (
            t,
            f"0/2 nodes are available: 2 {RWOP_REASON}. no new claims to deallocate, "
            f"preemption: 0/2 nodes are available: {none_found}",
        )
        for t in (5.0, 40.0)
    ]
    assert messages(doc, "FailedScheduling", "default/vip") == [
        (10.0, f"0/2 nodes are available: 2 {RWOP_REASON}.")
    ]
    assert [(p["node"], p["victims"]) for p in doc["preemptions"]] == [
        (holder_node, ["default/holder"])
    ]
    assert (got["vip"]["nodeName"], got["vip"]["scheduledAt"]) == (holder_node, 40.0)
    assert got["intruder"]["phase"] == "Pending"


# ------------------------------------------------------------ ephemeral volumes

EPHEMERAL = (
    NODES
    + """---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: fast}
provisioner: csi.example.com
volumeBindingMode: WaitForFirstConsumer
allowedTopologies:
- matchLabelExpressions:
  - {key: kubernetes.io/hostname, values: [n2]}
---
apiVersion: v1
kind: Pod
metadata:
  name: job
  annotations: {kubesched.io/delete-at: 60s}
spec:
  terminationGracePeriodSeconds: 0
  containers: [{name: c, image: x}]
  volumes:
  - name: scratch
    ephemeral:
      volumeClaimTemplate:
        spec:
          storageClassName: fast
          accessModes: [ReadWriteOnce]
          resources: {requests: {storage: 1Gi}}
"""
)


def test_ephemeral_volume_lives_and_dies_with_its_pod(tmp_path: Path) -> None:
    """The ephemeral volume controller creates job-scratch; VolumeBinding provisions
    it where the class allows (n2); at 60 s the pod goes, the garbage collector
    deletes the claim and the provisioned volume (reclaim policy Delete) goes too."""
    doc = simulate_text(tmp_path, EPHEMERAL)
    assert pods(doc)["job"]["nodeName"] == "n2"
    assert doc["persistentVolumeClaims"] == []
    assert doc["persistentVolumes"] == []
    alive = simulate_text(tmp_path, EPHEMERAL, "--until", "30s")
    [claim] = alive["persistentVolumeClaims"]
    assert (claim["name"], claim["phase"], claim["selectedNode"]) == ("job-scratch", "Bound", "n2")


def test_results_without_storage_keep_their_shape(tmp_path: Path) -> None:
    doc = simulate_text(tmp_path, NODES)
    assert "persistentVolumeClaims" not in doc and "persistentVolumes" not in doc


# ------------------------------------------------------------------ bad input


@pytest.mark.parametrize(
    ("text", "want"),
    [
        pytest.param(
            """apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data}
spec: {accessModes: [ReadWriteOnce]}
""",
            "persistentvolumeclaim default/data: spec.resources.requests.storage: Required value",
            id="claim without a storage request",
        ),
        pytest.param(
            """apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data}
spec: {accessModes: [ReadWriteOncePod, ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
""",
            "persistentvolumeclaim default/data: spec.accessModes: Forbidden: may not use "
            "ReadWriteOncePod with other access modes",
            id="ReadWriteOncePod with another mode",
        ),
        pytest.param(
            """apiVersion: v1
kind: PersistentVolume
metadata: {name: pv}
spec: {capacity: {storage: 1Gi}, accessModes: [ReadWriteOnce]}
""",
            "persistentvolume pv: spec: Required value: must specify a volume type",
            id="volume without a source",
        ),
        pytest.param(
            """apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: sc}
provisioner: p
volumeBindingMode: Later
""",
            'storageclass sc: volumeBindingMode: Unsupported value: "Later": supported values: '
            '"Immediate", "WaitForFirstConsumer"',
            id="unknown binding mode",
        ),
        pytest.param(
            """apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers: [{name: c, image: x}]
  volumes: [{name: data, emptyDir: {}, hostPath: {path: /x}}]
""",
            "pod default/p: spec.volumes[0].hostPath: Forbidden: may not specify more than 1 "
            "volume type",
            id="volume with two sources",
        ),
        pytest.param(
            """apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers: [{name: c, image: x}]
  volumes: [{name: data, persistentVolumeClaim: {}}]
""",
            "pod default/p: spec.volumes[0].persistentVolumeClaim.claimName: Required value",
            id="claim volume without a claim name",
        ),
    ],
)
def test_bad_storage_input(tmp_path: Path, text: str, want: str) -> None:
    f = tmp_path / "bad.yaml"
    f.write_text(text)
    result = CliRunner().invoke(main, ["simulate", "-f", str(f), "-o", "json"])
    assert result.exit_code == 2
    assert result.stderr.strip() == f"error: {f}: {want}"
