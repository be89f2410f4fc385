"""Rendering (cli/render.py): kubectl-like tables and the JSON/YAML/JSONL documents.

AGE follows apimachinery's duration.HumanDuration (what kubectl prints), STATUS
kubectl's pod printer, columns kubectl's tabwriter (3 spaces of padding).
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.api.types import NANOS
from kubesched.cli.render import (
    format_seconds,
    human_duration,
    pod_status,
    pods_table,
    summary_line,
    tabulate,
    to_json,
    to_jsonl,
    to_yaml,
    watch_table,
)
from kubesched.driver.record import RunRecord
from kubesched.driver.report import build_result
from kubesched.sim.cluster import Cluster
from kubesched.sim.engine import Engine
from tests.builders import make_node, make_pod

S = NANOS
MS = NANOS // 1000
MIN = 60 * S
H = 60 * MIN
D = 24 * H


@pytest.mark.parametrize(
    ("ns", "want"),
    [
        pytest.param(S, "1s", id="TestHumanDuration/1s"),
        pytest.param(70 * S, "70s", id="TestHumanDuration/1m10s"),
        pytest.param(190 * S, "3m10s", id="TestHumanDuration/3m10s"),
        pytest.param(70 * MIN, "70m", id="TestHumanDuration/1h10m0s"),
        pytest.param(47 * H, "47h", id="TestHumanDuration/47h0m0s"),
        pytest.param(49 * H, "2d1h", id="TestHumanDuration/49h0m0s"),
        pytest.param((8 * 24 + 2) * H, "8d", id="TestHumanDuration/194h0m0s"),
        pytest.param(367 * D, "367d", id="TestHumanDuration/8808h0m0s"),
        pytest.param(365 * 2 * D + 25 * H, "2y1d", id="TestHumanDuration/17545h0m0s"),
        pytest.param(365 * 8 * D + 2 * H, "8y", id="TestHumanDuration/70082h0m0s"),
        pytest.param(-2 * S, "<invalid>", id="TestHumanDurationBoundaries/-2s"),
        pytest.param(-2 * S + 1, "0s", id="TestHumanDurationBoundaries/-1.999999999s"),
        pytest.param(0, "0s", id="TestHumanDurationBoundaries/0s"),
        pytest.param(S - MS, "0s", id="TestHumanDurationBoundaries/999ms"),
        pytest.param(2 * MIN - MS, "119s", id="TestHumanDurationBoundaries/1m59.999s"),
        pytest.param(2 * MIN, "2m", id="TestHumanDurationBoundaries/2m0s"),
        pytest.param(2 * MIN + S, "2m1s", id="TestHumanDurationBoundaries/2m1s"),
        pytest.param(10 * MIN - MS, "9m59s", id="TestHumanDurationBoundaries/9m59.999s"),
        pytest.param(10 * MIN, "10m", id="TestHumanDurationBoundaries/10m0s"),
        pytest.param(10 * MIN + S, "10m", id="TestHumanDurationBoundaries/10m1s"),
        pytest.param(3 * H - MS, "179m", id="TestHumanDurationBoundaries/2h59m59.999s"),
        pytest.param(3 * H, "3h", id="TestHumanDurationBoundaries/3h0m0s"),
        pytest.param(3 * H + MIN, "3h1m", id="TestHumanDurationBoundaries/3h1m0s"),
        pytest.param(8 * H - MS, "7h59m", id="TestHumanDurationBoundaries/7h59m59.999s"),
        pytest.param(8 * H, "8h", id="TestHumanDurationBoundaries/8h0m0s"),
        pytest.param(8 * H + 59 * MIN, "8h", id="TestHumanDurationBoundaries/8h59m0s"),
        pytest.param(2 * D - MS, "47h", id="TestHumanDurationBoundaries/47h59m59.999s"),
        pytest.param(2 * D, "2d", id="TestHumanDurationBoundaries/48h0m0s"),
        pytest.param(2 * D + H, "2d1h", id="TestHumanDurationBoundaries/49h0m0s"),
        pytest.param(8 * D - MS, "7d23h", id="TestHumanDurationBoundaries/191h59m59.999s"),
        pytest.param(8 * D, "8d", id="TestHumanDurationBoundaries/192h0m0s"),
        pytest.param(8 * D + 23 * H, "8d", id="TestHumanDurationBoundaries/215h0m0s"),
        pytest.param(2 * 365 * D - MS, "729d", id="TestHumanDurationBoundaries/17519h59m59.999s"),
        pytest.param(2 * 365 * D, "2y", id="TestHumanDurationBoundaries/17520h0m0s"),
        pytest.param(2 * 365 * D + 23 * H, "2y", id="TestHumanDurationBoundaries/17543h0m0s"),
        pytest.param(2 * 365 * D + D - MS, "2y", id="TestHumanDurationBoundaries/17543h59m59.999s"),
        pytest.param(2 * 365 * D + D, "2y1d", id="TestHumanDurationBoundaries/17544h0m0s"),
        pytest.param(3 * 365 * D, "3y", id="TestHumanDurationBoundaries/26280h0m0s"),
        pytest.param(7 * 365 * D, "7y", id="TestHumanDurationBoundaries/61320h0m0s"),
        pytest.param(8 * 365 * D - MS, "7y364d", id="TestHumanDurationBoundaries/70079h59m59.999s"),
        pytest.param(8 * 365 * D, "8y", id="TestHumanDurationBoundaries/70080h0m0s"),
        pytest.param(8 * 365 * D + 364 * D, "8y", id="TestHumanDurationBoundaries/78816h0m0s"),
        pytest.param(9 * 365 * D, "9y", id="TestHumanDurationBoundaries/78840h0m0s"),
    ],
)
def test_human_duration(ns: int, want: str) -> None:
    assert human_duration(ns) == want


@pytest.mark.parametrize(
    ("pod_builder", "want"),
    [
        pytest.param(make_pod("p"), "Pending", id="pending"),
        pytest.param(make_pod("p").node("n1"), "Running", id="running"),
        pytest.param(make_pod("p").node("n1").phase("Succeeded"), "Completed", id="succeeded"),
        pytest.param(make_pod("p").node("n1").phase("Failed"), "Error", id="failed"),
        pytest.param(make_pod("p").node("n1").terminating(5), "Terminating", id="terminating"),
        pytest.param(
            make_pod("p").node("n1").phase("Succeeded").terminating(5),
            "Terminating",
            id="a deletionTimestamp wins over the phase, as in kubectl",
        ),
    ],
)
def test_pod_status(pod_builder: Any, want: str) -> None:
    assert pod_status(pod_builder.obj()) == want


def test_tabulate_pads_columns_with_three_spaces() -> None:
    rows = [["NAME", "STATUS", "AGE"], ["a-long-name", "Running", "5s"], ["b", "Pending", "10m"]]
    assert tabulate(rows) == (
        "NAME          STATUS    AGE\na-long-name   Running   5s\nb             Pending   10m\n"
    )
    assert tabulate([]) == ""


@pytest.mark.parametrize(
    ("ns", "want"),
    [
        pytest.param(0, "0s", id="zero"),
        pytest.param(67 * S, "67s", id="whole seconds"),
        pytest.param(1500 * MS, "1.5s", id="a fraction"),
        pytest.param(250 * MS, "0.25s", id="milliseconds"),
    ],
)
def test_format_seconds(ns: int, want: str) -> None:
    assert format_seconds(ns) == want


@pytest.mark.parametrize(
    ("ns", "want"),
    [
        pytest.param(12345 * S + 250 * MS, "12345.25s", id="more than 6 significant digits"),
        pytest.param(2_000_000 * S, "2000000s", id="no exponent"),
    ],
)
def test_format_seconds_is_exact(ns: int, want: str) -> None:
    assert format_seconds(ns) == want


# --------------------------------------------------------------------------- tables of a run


def small_cluster(watch: bool = False) -> Cluster:
    """n1 with 'run' bound at 0s, 'gone' deleted (grace 0) at 10s, 'wait' pending from 5s
    (each instant's watch events delivered before the clock moves, as a run does)."""
    cluster = Cluster(Engine(), random.Random(0), watch=watch)
    cluster.create_node(make_node("n1").capacity(cpu="2").obj())
    cluster.create_pod(make_pod("run").priority(7).obj())
    cluster.bind(cluster.pods["default/run"], "n1")
    cluster.create_pod(make_pod("gone").grace(0).node("n1").obj())
    cluster.flush()
    cluster.engine.now = 5 * S
    cluster.create_pod(make_pod("wait").nominated("n1").obj())
    cluster.flush()
    cluster.engine.now = 10 * S
    cluster.delete_gracefully(cluster.pods["default/gone"], "Deleted")
    cluster.flush()
    return cluster


def small_record(watch: bool = False) -> RunRecord:
    return small_cluster(watch).record


def test_pods_table_shows_live_pods_with_age() -> None:
    out = pods_table(small_record(), end_time=130 * S)
    assert out == tabulate(
        [
            ["NAMESPACE", "NAME", "PRIORITY", "STATUS", "NODE", "NOMINATED NODE", "AGE"],
            ["default", "run", "7", "Running", "n1", "<none>", "2m10s"],
            ["default", "wait", "0", "Pending", "<none>", "n1", "2m5s"],
        ]
    )


def test_wide_table_adds_times_and_deleted_pods() -> None:
    out = pods_table(small_record(), end_time=130 * S, wide=True)
    rows = [line.split() for line in out.splitlines()]
    assert rows[0][-4:] == ["CREATED", "SCHEDULED", "DELETED", "REASON"]
    by_name = {r[1]: r for r in rows[1:]}
    assert by_name["gone"][3] == "Deleted"
    assert by_name["gone"][-4:] == ["0s", "0s", "10s", "Deleted"]
    assert by_name["run"][-4:] == ["0s", "0s", "<none>", "<none>"]
    assert by_name["wait"][-4:] == ["5s", "<none>", "<none>", "<none>"]


def test_watch_table_lines_in_order() -> None:
    rows = [ln.split() for ln in watch_table(small_record(watch=True)).splitlines()]
    assert rows[0] == [
        "TIME", "NAMESPACE", "NAME", "PRIORITY", "STATUS", "NODE", "NOMINATED", "NODE", "AGE",
    ]  # fmt: skip
    lines = [(r[0], r[2], r[4]) for r in rows[1:]]
    assert lines[:5] == [
        ("0s", "run", "Pending"),
        ("0s", "run", "Running"),
        ("0s", "gone", "Running"),
        ("5s", "wait", "Pending"),
        ("10s", "gone", "Terminating"),
    ]
    assert rows[5][-1] == "10s"  # AGE of 'gone' at its deletion


def test_summary_line() -> None:
    record = small_record()
    assert summary_line(record, 130 * S, None) == (
        "pods: 2 scheduled, 1 pending, 0 preempted; preemptions: 0; simulated: 130s"
    )
    assert summary_line(record, 130 * S, 0.5).endswith("; wall: 0.50s")


# --------------------------------------------------------------------------- documents


def document() -> dict[str, Any]:
    cluster = small_cluster()
    cluster.record.event(
        cluster.pods["default/wait"],
        "Warning",
        "FailedScheduling",
        "Scheduling",
        " ".join(["naïve"] * 200),
    )
    return build_result(cluster.record, seed=3, end_time=130 * S, metrics={"m": 1})


def test_to_json_is_indented_utf8_with_a_final_newline() -> None:
    doc = document()
    text = to_json(doc)
    assert text.endswith("}\n")
    assert "naïve" in text
    assert text.startswith('{\n  "apiVersion": "kubesched.io/v1alpha1",\n')
    assert json.loads(text) == doc


def test_to_yaml_keeps_key_order_and_long_lines() -> None:
    doc = document()
    text = to_yaml(doc)
    assert yaml.safe_load(text) == doc
    assert text.splitlines()[:4] == [
        "apiVersion: kubesched.io/v1alpha1",
        "kind: SimulationResult",
        "seed: 3",
        "simulatedSeconds: 130.0",
    ]
    (message_line,) = [ln for ln in text.splitlines() if "message:" in ln]
    assert message_line.rstrip().endswith("naïve")  # not folded


def test_to_jsonl_has_one_object_per_line_and_a_result_last() -> None:
    doc = document()
    lines = [json.loads(ln) for ln in to_jsonl(doc)]
    assert [x["type"] for x in lines if x["type"] == "pod"] == ["pod"] * len(doc["pods"])
    last = lines[-1]
    assert last == {
        "type": "result",
        "apiVersion": "kubesched.io/v1alpha1",
        "kind": "SimulationResult",
        "seed": 3,
        "simulatedSeconds": 130.0,
        "metrics": {"m": 1},
    }


def test_to_jsonl_event_lines_are_typed_event() -> None:
    doc = document()
    lines = [json.loads(ln) for ln in to_jsonl(doc)]
    assert sum(1 for x in lines if x["type"] == "event") == len(doc["events"])


def test_to_jsonl_is_in_time_order_with_watch_changes() -> None:
    """Changes, preemptions and events merged by time (at one time in that
    order), then the pods, then the result."""
    from click.testing import CliRunner

    from kubesched.cli.main import main

    seed = Path(__file__).resolve().parents[2] / "examples" / "preemption" / "seed-nginx.yaml"
    r = CliRunner().invoke(main, ["simulate", "-f", str(seed), "-o", "jsonl", "--watch"])
    assert r.exit_code == 0, r.output
    lines = [json.loads(ln) for ln in r.stdout.splitlines()]
    kinds = [x["type"] for x in lines]
    timed = [x for x in lines if x["type"] in ("change", "preemption", "event")]
    rank = {"change": 0, "preemption": 1, "event": 2}
    keys = [(x["time"], rank[x["type"]]) for x in timed]
    assert keys == sorted(keys)
    assert kinds[len(timed) :] == ["pod"] * (len(kinds) - len(timed) - 1) + ["result"]
    plain = CliRunner().invoke(main, ["simulate", "-f", str(seed), "-o", "jsonl"])
    plain_lines = [json.loads(ln) for ln in plain.stdout.splitlines()]
    assert [x for x in lines if x["type"] != "change"] == plain_lines
    # the changes are the --watch table's rows
    watch = CliRunner().invoke(main, ["simulate", "-f", str(seed), "--watch"])
    rows = [ln.split() for ln in watch.stdout.split("\n\n")[0].splitlines()[1:]]
    changes = [x for x in lines if x["type"] == "change"]
    assert [(r[2], r[4]) for r in rows] == [(c["name"], c["status"]) for c in changes]


def test_jsonl_lists_nodes_and_explanations_as_lines() -> None:
    from click.testing import CliRunner

    from kubesched.cli.main import main

    seed = Path(__file__).resolve().parents[2] / "examples" / "preemption" / "seed-nginx.yaml"
    args = ["simulate", "-f", str(seed), "--explain", "--show", "nodes"]
    doc = json.loads(CliRunner().invoke(main, [*args, "-o", "json"]).stdout)
    lines = [
        json.loads(x) for x in CliRunner().invoke(main, [*args, "-o", "jsonl"]).stdout.splitlines()
    ]
    strip = [{k: v for k, v in x.items() if k != "type"} for x in lines]
    kinds = [x["type"] for x in lines]
    assert [s for s, k in zip(strip, kinds, strict=True) if k == "node"] == doc["nodes"]
    assert [s for s, k in zip(strip, kinds, strict=True) if k == "explanation"] == doc[
        "explanations"
    ]
    assert "explanations" not in lines[-1] and "nodes" not in lines[-1]
