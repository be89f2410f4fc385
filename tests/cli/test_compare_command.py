"""``kubesched compare`` (cli/compare_command.py): every variant is the run
``simulate`` makes with the same flags, and the example's documented outcome."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result

from kubesched.cli.compare_command import variant_names
from kubesched.cli.main import main
from kubesched.report.metrics import run_metrics

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "compare"
SCENARIO = str(EXAMPLE / "scenario.yaml")
LEAST = str(EXAMPLE / "least-allocated.yaml")
MOST = str(EXAMPLE / "most-allocated.yaml")


def invoke(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def simulate_doc(*args: str) -> dict[str, Any]:
    r = invoke("simulate", "-o", "json", "--show", "nodes", *args)
    assert r.exit_code == 0, r.stderr
    doc: dict[str, Any] = json.loads(r.stdout)
    return doc


def test_each_variant_is_the_simulate_run_with_its_flags() -> None:
    r = invoke("compare", "-f", SCENARIO, "--config", LEAST, "--config", MOST, "-o", "json")
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    assert [v["name"] for v in doc["variants"]] == ["least-allocated", "most-allocated"]
    runs = [simulate_doc("-f", SCENARIO, "--config", c) for c in (LEAST, MOST)]
    for v, run in zip(doc["variants"], runs, strict=True):
        assert v["metrics"] == run_metrics(run)
    nodes = [
        {f"{p['namespace']}/{p['name']}": (p["nodeName"], p["deletionReason"]) for p in run["pods"]}
        for run in runs
    ]
    differ = sorted(k for k in nodes[0].keys() & nodes[1].keys() if nodes[0][k] != nodes[1][k])
    assert [p["pod"] for p in doc["placedDifferently"]] == differ
    assert doc["unmatchedPods"] == len(nodes[0].keys() ^ nodes[1].keys())


def test_the_example_preempts_only_when_spreading() -> None:
    """examples/compare: LeastAllocated leaves no node with 3 free CPUs, so both
    API pods preempt; MostAllocated packs the batch pods and none does."""
    doc = json.loads(
        invoke("compare", "-f", SCENARIO, "--config", LEAST, "--config", MOST, "-o", "json").stdout
    )
    least, most = (v["metrics"] for v in doc["variants"])
    assert (least["preemptions"], most["preemptions"]) == (2, 0)
    assert least["scheduled(class=api-critical)"] == most["scheduled(class=api-critical)"] == 2
    assert least["pending"] == most["pending"] == 0


def test_seeds_and_gates_make_variants_and_table_is_deterministic() -> None:
    args = ["compare", "-f", str(ROOT / "examples/preemption/seed-nginx.yaml"), "--seed", "0"]
    args += ["--seed", "3", "--feature-gates", "SchedulerAsyncPreemption=false"]
    args += ["--feature-gates", "SchedulerAsyncPreemption=true"]
    first = invoke(*args)
    assert first.exit_code == 0, first.stderr
    assert first.stdout == invoke(*args).stdout
    header = first.stdout.splitlines()[0].split()
    assert header[0] == "METRIC" and len(header) == 1 + 2 * 2 * 2
    assert "pod(s) placed differently" in first.stdout
    as_yaml = yaml.safe_load(invoke(*args, "-o", "yaml").stdout)
    assert [(v["seed"], v["featureGates"]) for v in as_yaml["variants"]] == [
        (0, "SchedulerAsyncPreemption=false"),
        (0, "SchedulerAsyncPreemption=true"),
        (3, "SchedulerAsyncPreemption=false"),
        (3, "SchedulerAsyncPreemption=true"),
    ]


def test_variant_names() -> None:
    assert variant_names(["a/x.yaml", None], [0], [""]) == ["x", "default"]
    assert variant_names(["a/x.yaml", "b/x.yaml"], [0], [""]) == ["a/x.yaml", "b/x.yaml"]
    assert variant_names([None], [1, 2], [""]) == ["seed=1", "seed=2"]
    assert variant_names([None, "c.yaml"], [0, 1], ["", "G=true"])[:2] == [
        "default seed=0 gates=default",
        "default seed=0 G=true",
    ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-f", SCENARIO, "--config", LEAST], "nothing to compare"),
        (["-f", "-", "--seed", "1", "--seed", "2"], "compare reads its input once per variant"),
        ([], "-f: required"),
        (["-f", SCENARIO, "--config", "missing.yaml", "--config", LEAST], "missing.yaml"),
        (["-f", SCENARIO, "--feature-gates", "Nope=true", "--seed", "1", "--seed", "2"], "Nope"),
    ],
)
def test_bad_input_exits_2_with_one_line(args: list[str], message: str) -> None:
    r = invoke("compare", *args)
    assert r.exit_code == 2
    assert message in r.stderr
    assert "Traceback" not in r.stderr


def test_report_file(tmp_path: Path) -> None:
    page = tmp_path / "c.html"
    r = invoke(
        "compare", "-f", SCENARIO, "--config", LEAST, "--config", MOST, "--report", str(page)
    )
    assert r.exit_code == 0, r.stderr
    html = page.read_text()
    for div in ("outcomes", "delay", "utilisation", "pending"):
        assert f'id="{div}"' in html
    assert "default/api-0" in html  # placed differently


def test_readme_transcript_is_the_output() -> None:
    readme = (ROOT / "README.md").read_text()
    [(args, shown)] = re.findall(r"```\n\$ kubesched compare (.*?)\n(.*?)```", readme, re.S)
    r = invoke("compare", *args.split())
    assert r.exit_code == 0, r.stderr
    assert r.stdout == shown
