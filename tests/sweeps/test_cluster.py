"""A sweep on a real two-process LocalCluster gives, row for row, what the serial
run of the same combination gives, and records failed runs as rows."""

from __future__ import annotations

import json
from typing import Any

import pandas as pd
import pytest
from click.testing import CliRunner

from kubesched.cli.main import main
from kubesched.report.metrics import run_metrics
from kubesched.sim.runspec import RunSpec, result_document
from kubesched.sweeps.api import run_plan, sweep
from kubesched.sweeps.plan import plan
from kubesched.sweeps.table import metric_columns

distributed = pytest.importorskip("distributed")


def same(row: dict[str, Any], expected: dict[str, float], metrics: list[str]) -> None:
    """Every figure of ``row`` is the serial run's (a class the run lacks counts 0)."""
    for m in metrics:
        want = expected.get(m, 0)
        assert float(row[m]) == pytest.approx(float(want), abs=0, rel=0), m
    assert set(expected) <= set(metrics)


def test_every_row_equals_the_serial_run_of_its_combination(
    client: distributed.Client, trace: str, config_file: str
) -> None:
    combos = plan(
        RunSpec(trace=trace),
        configs=[None, config_file, "no-such-config.yaml"],
        seeds=[0, 1, 2],
        params=[("sample", ["5", "60%"]), ("SchedulerAsyncPreemption", ["false", "true"])],
    )
    assert len(combos) == 3 * 2 * 2 * 3
    rows = run_plan(combos, client=client)
    metrics = metric_columns(rows)
    assert len(rows) == len(combos)
    figures = set()
    for combo, row in zip(combos, rows.to_dict(orient="records"), strict=True):
        assert (row["config"], row["seed"]) == (combo.config, combo.seed)
        assert [row[name] for name, _ in combo.params] == [v for _, v in combo.params]
        if combo.config == "no-such-config.yaml":
            assert row["error"] == "InputError: no-such-config.yaml: no such file or directory"
            assert all(pd.isna(row[m]) for m in metrics)
            continue
        assert pd.isna(row["error"]), row["error"]
        expected = run_metrics(result_document(combo.spec, nodes=True))
        same(row, expected, metrics)
        figures.add((row["scheduled"], row["pending"], row["pods"]))
    assert len(figures) > 1, "the sweep's dimensions should change the outcome"


def test_a_row_is_what_simulate_prints_for_the_same_flags(
    client: distributed.Client, trace: str, config_file: str
) -> None:
    combos = plan(
        RunSpec(trace=trace, until=400 * 10**9),
        configs=[config_file],
        seeds=[3],
        params=[("node-fraction", ["2/3"]), ("no-deletions", ["true"])],
    )
    row = run_plan(combos, client=client).to_dict(orient="records")[0]
    out = CliRunner().invoke(
        main,
        [
            "simulate",
            "--trace",
            trace,
            "--config",
            config_file,
            "--seed",
            "3",
            "--until",
            "400s",
            "--node-fraction",
            "2/3",
            "--no-deletions",
            "-o",
            "json",
            "--show",
            "nodes",
        ],
    )
    assert out.exit_code == 0, out.output
    expected = run_metrics(json.loads(out.stdout))
    same(row, expected, list(expected))


def test_the_python_api_on_an_embedded_cluster(tmp_path: Any) -> None:
    scenario = str(tmp_path / "s.yaml")
    with open(scenario, "w") as f:
        f.write(
            "apiVersion: v1\nkind: Node\nmetadata: {name: n}\n"
            "status: {allocatable: {cpu: '2', memory: 1Gi, pods: '10'}}\n---\n"
            "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\n"
            "spec: {containers: [{name: c, resources: {requests: {cpu: '1'}}}]}\n"
        )
    rows = sweep([scenario], seeds="0-1", params={"until": ["0s", "1m"]}, workers=1)
    assert rows[["until", "seed", "scheduled"]].to_dict(orient="records") == [
        {"until": "0s", "seed": 0, "scheduled": 1},
        {"until": "0s", "seed": 1, "scheduled": 1},
        {"until": "1m", "seed": 0, "scheduled": 1},
        {"until": "1m", "seed": 1, "scheduled": 1},
    ]
    assert rows["error"].isna().all()
