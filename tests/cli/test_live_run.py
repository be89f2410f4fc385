"""``kubesched run`` as a real process against the API-server double (a real HTTP
server on loopback): it binds its own pods, stops cleanly on SIGTERM, and of two
instances only the lease holder schedules."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from kubesched.live.apiserver_double import ApiServerDouble, RealClock
from tests.live.cluster_state import node, pod, wait_for

pytest.importorskip("kubernetes")

SRC = Path(__file__).resolve().parents[2] / "src"
NO_STATUS = ("--status-address", "127.0.0.1:0")


def ours(p: dict[str, Any]) -> dict[str, Any]:
    p["spec"]["schedulerName"] = "kubesched"
    return p


@contextmanager
def server() -> Iterator[ApiServerDouble]:
    api = ApiServerDouble(clock=RealClock()).start()
    try:
        yield api
    finally:
        api.stop()


@contextmanager
def kubesched_run(kubeconfig: Path, *args: str) -> Iterator[subprocess.Popen[str]]:
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "kubesched.cli.main", "run", "--kubeconfig", str(kubeconfig), *args],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def node_of(api: ApiServerDouble, name: str) -> str | None:
    got = api.get("v1", "Pod", name, "default")
    return None if got is None else got["spec"].get("nodeName")


def test_binds_its_pods_and_stops_on_sigterm(tmp_path: Path) -> None:
    with server() as api:
        api.create(node("n1", "2"))
        kc = api.write_kubeconfig(tmp_path / "kc")
        with kubesched_run(kc, "--no-leader-elect", "--seed", "0", *NO_STATUS) as proc:
            api.create(ours(pod("web-1", "500m")))
            api.create(pod("theirs", "500m"))
            wait_for(lambda: node_of(api, "web-1") == "n1")
            api.create(ours(pod("web-2", "500m")))  # arrives through the watch
            wait_for(lambda: node_of(api, "web-2") == "n1")
            proc.send_signal(signal.SIGTERM)
            _, err = proc.communicate(timeout=20)
        assert proc.returncode == 0, err
        assert node_of(api, "theirs") is None
        assert 'msg="scheduling as kubesched"' in err
        assert "Traceback" not in err


def test_of_two_instances_only_the_lease_holder_schedules(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        "profiles:\n- schedulerName: kubesched\n"
        "leaderElection:\n  leaseDuration: 3s\n  renewDeadline: 2s\n  retryPeriod: 200ms\n"
    )
    with server() as api:
        api.create(node("n1", "4"))
        kc = api.write_kubeconfig(tmp_path / "kc")
        with kubesched_run(kc, "--config", str(config), *NO_STATUS) as a:
            wait_for(
                lambda: (
                    api.get("coordination.k8s.io/v1", "Lease", "kubesched", "kube-system")
                    is not None
                )
            )
            with kubesched_run(kc, "--config", str(config), *NO_STATUS) as b:
                api.create(ours(pod("web-1", "500m")))
                wait_for(lambda: node_of(api, "web-1") == "n1")
                lease = api.get("coordination.k8s.io/v1", "Lease", "kubesched", "kube-system")
                assert lease is not None
                holder = lease["spec"]["holderIdentity"]

                # Only the holder's scheduler posted Scheduled events (sent in the
                # background, after the binding).
                def instances() -> set[str]:
                    return {
                        body["reportingInstance"]
                        for _, path, _, body in list(api.requests)
                        if path.endswith("/events") and isinstance(body, dict)
                    }

                wait_for(lambda: len(instances()) > 0)
                time.sleep(0.5)
                assert len(instances()) == 1
                # The first instance stops: the second takes over and schedules.
                a.send_signal(signal.SIGTERM)
                a.communicate(timeout=20)
                assert a.returncode == 0
                wait_for(
                    lambda: (
                        api.get("coordination.k8s.io/v1", "Lease", "kubesched", "kube-system")[
                            "spec"
                        ].get("holderIdentity")
                        not in (None, holder)
                    )
                )
                api.create(ours(pod("web-2", "500m")))
                wait_for(lambda: node_of(api, "web-2") == "n1")
                b.send_signal(signal.SIGTERM)
                b.communicate(timeout=20)
                assert b.returncode == 0


def test_refuses_the_default_scheduler_profile(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
    )
    proc = subprocess.run(
        [sys.executable, "-m", "kubesched.cli.main", "run", "--config", str(config)],
        capture_output=True,
        check=False,
        text=True,
        env={**os.environ, "PYTHONPATH": str(SRC)},
        timeout=60,
    )
    assert proc.returncode == 2
    assert 'profile "default-scheduler": kubesched would take the pods' in proc.stderr


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def bind(api: ApiServerDouble, name: str, node_name: str) -> None:
    body = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": name}}
    body["target"] = {"kind": "Node", "name": node_name}
    req = urllib.request.Request(
        f"{api.url}/api/v1/namespaces/default/pods/{name}/binding",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(req, timeout=5) as r:
        assert r.status == 201


def test_shadow_prints_verdicts_and_writes_nothing(tmp_path: Path) -> None:
    port = free_port()
    with server() as api:
        api.create(node("n1", "2"))
        kc = api.write_kubeconfig(tmp_path / "kc")
        env = {**os.environ, "PYTHONPATH": str(SRC)}
        proc = subprocess.Popen(
            [
                *(sys.executable, "-m", "kubesched.cli.main", "run", "--shadow"),
                *("--kubeconfig", str(kc), "--status-address", f"127.0.0.1:{port}"),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        try:

            def ready() -> bool:
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=2) as r:
                        return bool(r.status == 200)
                except OSError:
                    return False

            wait_for(ready)
            api.create(pod("web", "500m"))  # schedulerName default-scheduler
            time.sleep(1.0)  # kubesched decides as soon as the pod arrives
            assert node_of(api, "web") is None  # a shadow does not bind
            bind(api, "web", "n1")  # as the cluster's own scheduler does
            time.sleep(1.0)
            proc.send_signal(signal.SIGTERM)
            out, err = proc.communicate(timeout=20)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert proc.returncode == 0, err
    (line,) = [json.loads(x) for x in out.splitlines()]
    assert line["pod"] == "default/web" and line["verdict"] == "agree"
    assert 'msg="scheduling as default-scheduler"' in err
