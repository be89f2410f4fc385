"""A StatefulSet's volumeClaimTemplates end to end through ``kubesched simulate -o
json``: each replica gets its own claim, bound by VolumeBinding to a local volume
(WaitForFirstConsumer); a preempted replica comes back Pending under its name, on
the same claim, and can only go back to the node of its volume.

The timeline follows upstream v1.36's rules, step by step in the test's docstring.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from kubesched.cli.main import main

Doc = dict[str, Any]

SCENARIO = """
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: urgent}
value: 1000000
---
apiVersion: v1
kind: Node
metadata: {name: worker-a}
status: {allocatable: {cpu: "4", memory: 16Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: worker-b}
status: {allocatable: {cpu: "8", memory: 16Gi, pods: "110"}}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: local-storage}
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: local-a}
spec:
  capacity: {storage: 100Gi}
  accessModes: [ReadWriteOnce]
  persistentVolumeReclaimPolicy: Retain
  storageClassName: local-storage
  local: {path: /mnt/disks/ssd1}
  nodeAffinity:
    required:
      nodeSelectorTerms:
      - matchExpressions:
        - {key: kubernetes.io/hostname, operator: In, values: [worker-a]}
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: local-b}
spec:
  capacity: {storage: 100Gi}
  accessModes: [ReadWriteOnce]
  persistentVolumeReclaimPolicy: Retain
  storageClassName: local-storage
  local: {path: /mnt/disks/ssd1}
  nodeAffinity:
    required:
      nodeSelectorTerms:
      - matchExpressions:
        - {key: kubernetes.io/hostname, operator: In, values: [worker-b]}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  replicas: 2
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers:
      - name: db
        image: postgres
        resources: {requests: {cpu: "2", memory: 1Gi}}
  volumeClaimTemplates:
  - metadata: {name: data}
    spec:
      storageClassName: local-storage
      accessModes: [ReadWriteOnce]
      resources: {requests: {storage: 10Gi}}
---
apiVersion: v1
kind: Pod
metadata:
  name: urgent
  annotations: {kubesched.io/create-at: 60s, kubesched.io/run-for: 60s}
spec:
  priorityClassName: urgent
  containers:
  - name: c
    image: busybox
    resources: {requests: {cpu: "7", memory: 1Gi}}
"""


def simulate(tmp_path: Path, *extra: str) -> Doc:
    f = tmp_path / "sts.yaml"
    f.write_text(SCENARIO)
    result = CliRunner().invoke(main, ["simulate", "-f", str(f), "-o", "json", *extra])
    assert result.exit_code == 0, result.output
    doc: Doc = json.loads(result.stdout)
    return doc


def messages(doc: Doc, reason: str, obj: str) -> list[tuple[float, str]]:
    return [
        (e["time"], e["message"])
        for e in doc["events"]
        if e["reason"] == reason and e["object"] == obj
    ]


def test_a_preempted_replica_returns_to_the_node_of_its_volume(tmp_path: Path) -> None:
    """- 0 s: db-0 is created with its claim data-db-0 (WaitForFirstConsumer: left
      unbound). Both nodes fit it and have a free local volume; worker-b (8 CPUs)
      scores higher: NodeResourcesFit's LeastAllocated cpu (8-2)/8 = 75 against
      (4-2)/4 = 50 (memory equal), and BalancedAllocation's spread of cpu and memory
      fractions is smaller there (0.25/0.06 against 0.5/0.06); the other scores are
      equal. VolumeBinding binds data-db-0 to local-b.
    - 0 s: db-0 is Running and Ready, so OrderedReady creates db-1 and data-db-1.
      worker-b has no free volume left ("didn't find available persistent volumes
      to bind"): db-1 goes to worker-a, data-db-1 to local-a.
    - 60 s: urgent (7 CPUs) fits nowhere: worker-a's 4 CPUs are fewer than it asks
      (UnschedulableAndUnresolvable), worker-b has 6 free. DefaultPreemption evicts
      db-0 on worker-b (30 s grace) and nominates worker-b.
    - 90 s: db-0 is gone; urgent binds to worker-b; the StatefulSet creates db-0
      again, Pending, on the claim data-db-0 it had (not a new one). Its volume
      local-b pins it to worker-b, which has 1 CPU free: Insufficient cpu there and
      a volume node affinity conflict on worker-a, although worker-a has 2 CPUs
      free. Preemption cannot help: urgent outranks it on worker-b, worker-a is
      unresolvable.
    - 150 s: urgent succeeds (run-for 60 s) and db-0 binds to worker-b again."""
    doc = simulate(tmp_path)
    runs = [(p["name"], p["nodeName"], p["scheduledAt"], p["deletionReason"]) for p in doc["pods"]]
    assert sorted(runs, key=lambda r: (r[0], r[2])) == [
        ("db-0", "worker-b", 0.0, "Preempted"),
        ("db-0", "worker-b", 150.0, None),
        ("db-1", "worker-a", 0.0, None),
        ("urgent", "worker-b", 90.0, None),
    ]
    assert [(p["preemptor"], p["node"], p["victims"]) for p in doc["preemptions"]] == [
        ("default/urgent", "worker-b", ["default/db-0"])
    ]
    recreated = [p for p in doc["pods"] if p["name"] == "db-0" and p["deletionReason"] is None]
    assert [p["createdAt"] for p in recreated] == [90.0]
    assert messages(doc, "FailedScheduling", "default/db-0") == [
        (
            90.0,
            "0/2 nodes are available: 1 Insufficient cpu, "
            "1 node(s) had volume node affinity conflict. no new claims to deallocate, "
            "preemption: 0/2 nodes are available: 1 No preemption victims found for "
            "incoming pod, 1 Preemption is not helpful for scheduling.",
        )
    ]
    claims = {c["name"]: (c["phase"], c["volumeName"]) for c in doc["persistentVolumeClaims"]}
    assert claims == {"data-db-0": ("Bound", "local-b"), "data-db-1": ("Bound", "local-a")}
    volumes = {v["name"]: v["claim"] for v in doc["persistentVolumes"]}
    assert volumes == {"local-a": "default/data-db-1", "local-b": "default/data-db-0"}
    assert {e["reason"] for e in doc["events"]} == {"Scheduled", "FailedScheduling", "Preempted"}
    assert simulate(tmp_path, "--exact") == doc
