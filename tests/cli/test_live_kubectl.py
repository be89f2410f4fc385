"""``kubesched run`` (a real process) driven through real kubectl: the nodes and pods
are ``kubectl apply``-ed to the API-server double while kubesched runs, and the
decisions are read back as a user reads them, with ``kubectl get``.

kubectl is found by tests/live/cluster_state.py's ``find_kubectl``
($KUBESCHED_KUBECTL, next to the running Python, or on PATH); without one the
tests skip.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kubesched.live.apiserver_double import ApiServerDouble, RealClock
from tests.cli.test_live_run import NO_STATUS, kubesched_run
from tests.live.cluster_state import find_kubectl, wait_for

pytest.importorskip("kubernetes")
KUBECTL = find_kubectl()
pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl not installed")

NODES = """\
apiVersion: v1
kind: Node
metadata:
  name: n1
  labels: {kubernetes.io/hostname: n1, disk: ssd}
status:
  capacity: {cpu: "4", memory: 8Gi, pods: "110"}
---
apiVersion: v1
kind: Node
metadata:
  name: n2
  labels: {kubernetes.io/hostname: n2}
status:
  capacity: {cpu: "2", memory: 4Gi, pods: "110"}
"""

# `victim` runs on n2 (bound by its manifest); `urgent` fits no node and preempts
# it (n1 is full of `big`, whose priority is urgent's); grace periods are 0, so
# the victim goes at once and urgent binds to n2.
PODS = """\
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata:
  name: urgent
value: 1000
---
apiVersion: v1
kind: Pod
metadata:
  name: big
spec:
  schedulerName: kubesched
  priorityClassName: urgent
  nodeSelector: {disk: ssd}
  containers:
  - {name: c, image: "pause:3.10", resources: {requests: {cpu: "3", memory: 1Gi}}}
---
apiVersion: v1
kind: Pod
metadata:
  name: victim
spec:
  nodeName: n2
  terminationGracePeriodSeconds: 0
  containers:
  - {name: c, image: "pause:3.10", resources: {requests: {cpu: 1500m, memory: 1Gi}}}
---
apiVersion: v1
kind: Pod
metadata:
  name: theirs
spec:
  containers:
  - {name: c, image: "pause:3.10", resources: {requests: {cpu: 100m}}}
"""

LATER = """\
apiVersion: v1
kind: Pod
metadata:
  name: urgent
spec:
  schedulerName: kubesched
  priorityClassName: urgent
  terminationGracePeriodSeconds: 0
  containers:
  - {name: c, image: "pause:3.10", resources: {requests: {cpu: 1500m, memory: 1Gi}}}
---
apiVersion: v1
kind: Pod
metadata:
  name: too-big
spec:
  schedulerName: kubesched
  containers:
  - {name: c, image: "pause:3.10", resources: {requests: {cpu: "8"}}}
"""

NODE_OF = '{range .items[*]}{.metadata.name}={.spec.nodeName}{"\\n"}{end}'


class Kubectl:
    def __init__(self, kubeconfig: Path, home: Path) -> None:
        self.kubeconfig = kubeconfig
        self.home = home

    def run(self, *args: str) -> str:
        assert KUBECTL is not None
        env = {
            "PATH": os.environ.get("PATH", ""),
            "HOME": str(self.home),
            "KUBECONFIG": str(self.kubeconfig),
        }
        proc = subprocess.run(
            [KUBECTL, "--request-timeout=10s", *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    def apply(self, name: str, text: str) -> str:
        path = self.home / name
        path.write_text(text)
        return self.run("apply", "-f", str(path))

    def nodes_of_pods(self) -> dict[str, str]:
        out = self.run("get", "pods", "-o", f"jsonpath={NODE_OF}")
        return dict(line.split("=", 1) for line in out.splitlines() if line)

    def json(self, *args: str) -> Any:
        return json.loads(self.run(*args, "-o", "json"))


@pytest.fixture
def kubectl(tmp_path: Path) -> Iterator[Kubectl]:
    """kubectl against a double on the wall clock (its fake kubelet ends deletions)."""
    api = ApiServerDouble(clock=RealClock()).start()
    try:
        yield Kubectl(api.write_kubeconfig(tmp_path / "kubeconfig"), tmp_path)
    finally:
        api.stop()


def test_kubectl_applied_pods_are_scheduled_and_read_back(kubectl: Kubectl) -> None:
    assert kubectl.apply("nodes.yaml", NODES).splitlines() == [
        "node/n1 created",
        "node/n2 created",
    ]
    with kubesched_run(kubectl.kubeconfig, "--no-leader-elect", "--seed", "0", *NO_STATUS) as proc:
        kubectl.apply("pods.yaml", PODS)
        # big: the only node with disk=ssd; the victim is bound by its manifest;
        # theirs belongs to default-scheduler and is left alone.
        wait_for(lambda: kubectl.nodes_of_pods().get("big") == "n1")
        kubectl.apply("later.yaml", LATER)
        wait_for(lambda: kubectl.nodes_of_pods().get("urgent") == "n2")
        placed = kubectl.nodes_of_pods()
        assert placed == {"big": "n1", "theirs": "", "too-big": "", "urgent": "n2"}
        too_big = kubectl.json("get", "pod", "too-big")
        (cond,) = [c for c in too_big["status"]["conditions"] if c["type"] == "PodScheduled"]
        assert (cond["status"], cond["reason"]) == ("False", "Unschedulable")
        urgent = kubectl.json("get", "pod", "urgent")
        # The nomination was cleared by the binding (ClearingNominatedNodeNameAfterBinding).
        assert "nominatedNodeName" not in urgent["status"]
        events = kubectl.json("get", "events.events.k8s.io")["items"]
        proc.terminate()
        _, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err
    seen = {(e["reason"], e["regarding"]["name"]): e for e in events}
    for pod, node in (("big", "n1"), ("urgent", "n2")):
        ev = seen[("Scheduled", pod)]
        assert ev["note"] == f"Successfully assigned default/{pod} to {node}"
        assert ev["reportingController"] == "kubesched" and ev["type"] == "Normal"
    preempted = seen[("Preempted", "victim")]
    assert preempted["related"]["name"] == "urgent"
    assert ("FailedScheduling", "too-big") in seen and ("FailedScheduling", "urgent") in seen
    assert not any(name == "theirs" for _, name in seen)
    # The same events through the core/v1 view of the one event store.
    core = kubectl.json("get", "events")["items"]
    assert {(e["reason"], e["involvedObject"]["name"]) for e in core} >= {
        ("Scheduled", "big"),
        ("Scheduled", "urgent"),
    }
