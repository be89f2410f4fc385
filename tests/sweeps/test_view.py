"""The sweep's comparison page: one variant per configuration, means and CIs."""

from __future__ import annotations

import pytest

from kubesched.sim.runspec import RunSpec
from kubesched.sweeps.engine import Outcome
from kubesched.sweeps.plan import plan
from kubesched.sweeps.stats import mean_ci
from kubesched.sweeps.table import rows_frame, summarize
from kubesched.sweeps.view import comparison, html, seed_ranges


def test_seed_ranges() -> None:
    assert seed_ranges([5, 0, 1, 2, 9, 10]) == "0-2,5,9-10"
    assert seed_ranges([3]) == "3"
    assert seed_ranges([]) == ""


def test_one_variant_per_configuration_with_means_and_half_widths() -> None:
    combos = plan(
        RunSpec(files=("s.yaml",)),
        configs=[None, "cfg/b.yaml"],
        seeds=[0, 1, 2],
        params=[("SchedulerAsyncPreemption", ["true", "false"])],
    )
    outcomes = [
        Outcome({"pods": 3, "scheduled": i % 3, "utilisation.cpu": 10.0 * i}) for i in range(9)
    ] + [Outcome(error="InputError: boom")] * 3
    rows = rows_frame(combos, outcomes)
    doc = comparison(rows, summarize(rows), "SchedulerAsyncPreemption=true")
    names = [v["name"] for v in doc["variants"]]
    assert names == [
        "(default) SchedulerAsyncPreemption=true",
        "(default) SchedulerAsyncPreemption=false",
        "b SchedulerAsyncPreemption=true",
        "b SchedulerAsyncPreemption=false",
    ]
    first, last = doc["variants"][0], doc["variants"][-1]
    assert (first["config"], first["seed"]) == (None, "0-2")
    assert first["featureGates"] == "SchedulerAsyncPreemption=true"
    assert doc["variants"][1]["featureGates"] == "SchedulerAsyncPreemption=false"
    mean, _, high = mean_ci([0.0, 1.0, 2.0])
    assert first["metrics"]["scheduled"] == mean
    assert first["ci"]["scheduled"] == pytest.approx(high - mean)
    assert first["ci"]["pods"] == 0.0
    assert last["config"] == "cfg/b.yaml"
    assert last["metrics"]["scheduled"] is None and last["ci"] == {}
    page = html(rows, summarize(rows))
    assert "<h1>kubesched sweep</h1>" in page
    assert f"1 ± {high - mean:.2f}" in page
