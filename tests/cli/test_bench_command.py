"""``kubesched bench`` on the command line (cli/bench_command.py): the preemptor
template option and its errors (one line, exit 2, as every bad flag)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from click.testing import CliRunner, Result

from kubesched.cli.main import main
from kubesched.sim import bench as bench_module

SMALL = ["--nodes", "5", "--init-pods", "20", "--pods", "5", "-o", "json"]


def bench(*args: str) -> Result:
    return CliRunner().invoke(main, ["bench", *args])


@pytest.mark.parametrize(
    ("args", "template"),
    [
        pytest.param(["PreemptionBasic"], "default-preemption", id="PreemptionBasic default"),
        pytest.param(
            ["PreemptionBasic", "--preemptor-template", "legacy-3cpu"],
            "legacy-3cpu",
            id="PreemptionBasic legacy",
        ),
        pytest.param(["PreemptionAsync"], "default-preemption", id="PreemptionAsync default"),
        pytest.param(["Unschedulable"], None, id="Unschedulable has no preemptor"),
    ],
)
def test_json_names_the_preemptor_template(args: list[str], template: str | None) -> None:
    result = bench(*args, *SMALL)
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc.get("preemptorTemplate") == template
    assert doc["scheduled"] == 5


@pytest.mark.parametrize(
    ("args", "error"),
    [
        pytest.param(
            ["SchedulingBasic", "--preemptor-template", "legacy-3cpu"],
            "error: Invalid value for '--preemptor-template': SchedulingBasic has no preemptor "
            "(only PreemptionBasic, PreemptionAsync have one)",
            id="a workload without a preemptor",
        ),
        pytest.param(
            ["PreemptionBasic", "--preemptor-template", "huge"],
            "error: Invalid value for '--preemptor-template': 'huge' is not one of "
            "'default-preemption', 'legacy-3cpu'.",
            id="an unknown template",
        ),
    ],
)
def test_bad_preemptor_template_exits_2_with_one_line(args: list[str], error: str) -> None:
    result = bench(*args, *SMALL)
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [error]


@pytest.mark.parametrize("flag", [None, "--exact", "--per-node"])
def test_exact_and_per_node_flags_run_the_per_node_path(
    flag: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--per-node`` is an alias of ``--exact``: both reach ``bench.run`` as
    ``per_node=True``; the decisions (the JSON counts) stay the same."""
    seen: list[bool] = []
    real = bench_module.run

    def spy(*args: Any, **kw: Any) -> Any:
        seen.append(kw["per_node"])
        return real(*args, **kw)

    monkeypatch.setattr(bench_module, "run", spy)
    result = bench("PreemptionBasic", *SMALL, *([flag] if flag else []))
    assert result.exit_code == 0, result.stderr
    assert seen == [flag is not None]
    assert json.loads(result.stdout)["scheduled"] == 5


def test_explain_records_every_pod_without_changing_decisions() -> None:
    plain = bench("PreemptionBasic", *SMALL)
    explained = bench("PreemptionBasic", *SMALL, "--explain")
    assert plain.exit_code == 0 and explained.exit_code == 0, explained.stderr
    a, b = json.loads(plain.stdout), json.loads(explained.stdout)
    assert "explainedPods" not in a
    assert b.pop("explainedPods") == 20 + 5  # every init and measured pod had an attempt
    for k in ("scheduled", "preemptions", "cycles", "churnPods"):
        assert a[k] == b[k]
