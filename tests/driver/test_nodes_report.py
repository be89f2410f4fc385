"""``--show nodes`` (driver/nodes_report.py): every bound, live pod is listed on
its node with its requests summed; the table shows the same numbers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from kubesched.api.quantity import parse_quantity
from kubesched.cli.main import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def simulate(*args: str) -> Any:
    r = CliRunner().invoke(main, ["simulate", *args])
    assert r.exit_code == 0, r.output
    return r


@pytest.mark.parametrize(
    "files",
    [
        ["preemption/seed-nginx.yaml"],
        ["real/cluster.yaml", "real/what-if.yaml"],
        ["preemption/pdb-steering.yaml"],
    ],
)
def test_nodes_view_matches_the_pods(files: list[str]) -> None:
    args = [a for f in files for a in ("-f", str(EXAMPLES / f))]
    doc = json.loads(simulate(*args, "--show", "nodes", "-o", "json").stdout)
    plain = json.loads(simulate(*args, "-o", "json").stdout)
    nodes = doc.pop("nodes")
    requests = [p.pop("requests") for p in doc["pods"]]
    assert doc == plain  # only added: nodes and each pod's requests
    assert all(isinstance(r, dict) for r in requests)
    live = {
        f"{p['namespace']}/{p['name']}": p["nodeName"]
        for p in doc["pods"]
        if p["nodeName"] and p["deletedAt"] is None and p["phase"] not in ("Succeeded", "Failed")
    }
    listed = {pod: n["name"] for n in nodes for pod in n["pods"]}
    assert listed == live
    for n in nodes:
        assert int(n["requested"].get("pods", "0")) == len(n["pods"])
        for resource, used in n["requested"].items():
            alloc = n["allocatable"].get(resource)
            if alloc is not None and resource != "pods":
                assert parse_quantity(used) <= parse_quantity(alloc), (n["name"], resource)
    table = simulate(*args, "--show", "nodes").stdout.split("\n\n")[-1].splitlines()
    assert table[0].split() == ["NODE", "STATUS", "CPU", "MEMORY", "PODS"]
    rows = {r.split()[0]: r.split() for r in table[1:]}
    for n in nodes:
        cpu = f"{n['requested'].get('cpu', '0')}/{n['allocatable'].get('cpu', '0')}"
        assert rows[n["name"]][2] == cpu
