"""``kubesched snapshot`` and ``simulate --from-cluster`` against the API-server
double (a real HTTP server on loopback)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result

from kubesched.cli.live_commands import EXIT_CLUSTER
from kubesched.cli.main import main
from kubesched.live.apiserver_double import ApiServerDouble
from kubesched.live.snapshot import SNAPSHOT_KINDS
from tests.live.cluster_state import double, small_cluster

pytest.importorskip("kubernetes")

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def pods_of(result: Result) -> list[tuple[Any, ...]]:
    doc = json.loads(result.stdout)
    return sorted(
        (p["namespace"], p["name"], p.get("nodeName"), p["phase"], p.get("nominatedNodeName"))
        for p in doc["pods"]
    )


def test_snapshot_then_simulate_equals_simulate_from_cluster(tmp_path: Path) -> None:
    with double() as api:
        small_cluster(api)
        kc = str(api.write_kubeconfig(tmp_path / "kc"))
        snap = run("snapshot", "--kubeconfig", kc)
        live = run("simulate", "--from-cluster", "--kubeconfig", kc, "-o", "json")
    assert snap.exit_code == 0, snap.output
    assert snap.stdout.startswith("# kubesched snapshot of http://127.0.0.1:")
    (tmp_path / "snap.yaml").write_text(snap.stdout)
    from_file = run("simulate", "-f", str(tmp_path / "snap.yaml"), "-o", "json")
    assert from_file.exit_code == 0 and live.exit_code == 0, (from_file.output, live.output)
    assert live.stdout == from_file.stdout
    # The pending pod of class "high" preempts one of the two low pods.
    pods = pods_of(live)
    assert ("default", "urgent", "n1", "Running", None) in pods
    doc = json.loads(live.stdout)
    assert [p["preemptor"] for p in doc["preemptions"]] == ["default/urgent"]


def test_json_snapshot_is_the_same_list(tmp_path: Path) -> None:
    with double() as api:
        small_cluster(api)
        kc = str(api.write_kubeconfig(tmp_path / "kc"))
        as_yaml = run("snapshot", "--kubeconfig", kc)
        as_json = run("snapshot", "--kubeconfig", kc, "-o", "json")
    assert json.loads(as_json.stdout) == yaml.safe_load(as_yaml.stdout)


def test_from_cluster_takes_what_if_manifests(tmp_path: Path) -> None:
    what_if = tmp_path / "what-if.yaml"
    what_if.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: extra, namespace: default}\n"
        "spec:\n  priorityClassName: high\n  containers:\n"
        "  - {name: c, image: nginx, resources: {requests: {cpu: '1'}}}\n"
    )
    with double() as api:
        small_cluster(api)
        kc = str(api.write_kubeconfig(tmp_path / "kc"))
        result = run(
            "simulate", "--from-cluster", "--kubeconfig", kc, "-f", str(what_if), "-o", "json"
        )
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    # Two high-priority pods of 1 CPU: each preempts the low pod of one node.
    assert sorted(p["preemptor"] for p in doc["preemptions"]) == ["default/extra", "default/urgent"]
    placed = {p["name"]: p.get("nodeName") for p in doc["pods"] if p["phase"] == "Running"}
    assert {placed["extra"], placed["urgent"]} == {"n1", "n2"}


def restore(api: ApiServerDouble, dump: dict[str, Any]) -> None:
    """Put a ``kubectl get -o yaml`` dump's objects into the double as a cluster
    holds them: namespaces first, owners before what they own (every
    ownerReference then points at the uid the server gave the owner: it assigns
    new ones), and each object's status written through its status subresource
    (as the kubelet and the controllers do; a create resets a pod's status)."""
    order = [r.kind for r in SNAPSHOT_KINDS]
    items = sorted(
        dump["items"], key=lambda i: order.index(i["kind"]) if i["kind"] in order else -1
    )
    for ns in sorted({i["metadata"].get("namespace") for i in items} - {None}):
        if api.get("v1", "Namespace", ns) is None:
            api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    uids: dict[str, str] = {}
    for item in items:
        if item["kind"] not in order:
            continue
        meta = item["metadata"]
        old = meta.pop("uid", None)
        for ref in meta.get("ownerReferences", ()):
            ref["uid"] = uids[ref["uid"]]
        created = api.create(item)
        uids[old] = created["metadata"]["uid"]
        if "status" in item and created.get("status") != item["status"]:
            res = api.resource_for(item["apiVersion"], item["kind"])
            name, ns = created["metadata"]["name"], created["metadata"].get("namespace", "")
            api.registry.update(res, ns, name, {**created, "status": item["status"]}, sub="status")


def test_a_restored_dump_simulates_as_the_dump_itself(tmp_path: Path) -> None:
    """examples/real/cluster.yaml (a kubectl dump with Deployments, DaemonSets, a
    StatefulSet, finished and running Jobs, a CronJob, PDBs) put into a cluster and
    read back by a snapshot places every pod as simulating the dump itself does."""
    dump_path = EXAMPLES / "real" / "cluster.yaml"
    direct = run("simulate", "-f", str(dump_path), "-o", "json")
    assert direct.exit_code == 0, direct.output
    with double(kubelet=False) as api:
        restore(api, yaml.safe_load(dump_path.read_text()))
        kc = str(api.write_kubeconfig(tmp_path / "kc"))
        live = run("simulate", "--from-cluster", "--kubeconfig", kc, "-o", "json")
    assert live.exit_code == 0, live.output
    # Every owner adopts its pods again (no replacement is created) and every pod
    # keeps its node and phase. One pod more: the objects were created in the
    # double in 2026, and the monthly CronJob's last run was in 2024, so its
    # missed run starts at once, as the CronJob controller does.
    extra = [p for p in pods_of(live) if p not in pods_of(direct)]
    assert [p[1].rsplit("-", 1)[0] for p in extra] == ["cleanup-29891700"]
    assert [p for p in pods_of(live) if p not in extra] == pods_of(direct)


def test_an_unreachable_cluster_exits_4_with_one_line(tmp_path: Path) -> None:
    with double() as api:
        kc = str(api.write_kubeconfig(tmp_path / "kc"))
    # The server is stopped now.
    for args in (("snapshot",), ("simulate", "--from-cluster")):
        result = run(*args, "--kubeconfig", kc)
        assert result.exit_code == EXIT_CLUSTER
        assert result.output.startswith("error: cannot reach http://127.0.0.1:")
        assert result.output.count("\n") == 1 and "Traceback" not in result.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--kubeconfig", "x", "-f", "y"), "error: --kubeconfig and --context need --from-cluster"),
        (("--from-cluster", "--trace", "openb:a,b"), "error: --from-cluster and --trace"),
        ((), "error: -f: required (or --trace, or --from-cluster)"),
    ],
)
def test_flag_errors(args: tuple[str, ...], message: str) -> None:
    result = run("simulate", *args)
    assert result.exit_code == 2
    assert result.output.startswith(message)
