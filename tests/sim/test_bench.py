"""``kubesched bench`` workloads (sim/bench.py) follow upstream's scheduler_perf templates.

The expected values are upstream's files (kubernetes/kubernetes at
121460defea7874f50c64bb8de51018a86c6eef3):
test/integration/scheduler_perf/default_preemption/templates/pod-high-priority.yaml
(the preemptor of PreemptionBasic and PreemptionAsync in
default_preemption/performance-config.yaml) and, for the legacy variant,
templates/pod-high-priority.yaml, which those workloads used before.
"""

from __future__ import annotations

import pytest

from kubesched.api.types import PodSpec
from kubesched.sim import bench
from kubesched.sim.simulation import Simulation

MI = 2**20


def _summary(spec: PodSpec) -> tuple[int, int, int | None]:
    (c,) = spec.containers
    return c.requests["cpu"], c.requests["memory"], spec.termination_grace_period_seconds


@pytest.mark.parametrize(
    ("template", "want"),
    [
        pytest.param(
            "default-preemption",
            # 3970m / 500Mi (requests = limits), terminationGracePeriodSeconds 0, priority 10000.
            ((3970, 500 * MI, 0), 10000, "registry.k8s.io/pause:3.10.2"),
            id="default_preemption/templates/pod-high-priority.yaml",
        ),
        pytest.param(
            "legacy-3cpu",
            # 3 CPU / 500Mi, no grace period given, priority 10.
            ((3000, 500 * MI, None), 10, "registry.k8s.io/pause:3.10"),
            id="templates/pod-high-priority.yaml",
        ),
    ],
)
def test_preemptor_templates(template: str, want: tuple[object, int, str]) -> None:
    spec, priority = bench.PREEMPTOR_TEMPLATES[template]
    assert (_summary(spec), priority, spec.containers[0].image) == want


@pytest.mark.parametrize(
    ("name", "template", "measured", "churn"),
    [
        pytest.param("PreemptionBasic", None, "default-preemption", None, id="PreemptionBasic"),
        pytest.param(
            "PreemptionBasic", "legacy-3cpu", "legacy-3cpu", None, id="PreemptionBasic-legacy"
        ),
        pytest.param(
            "PreemptionAsync", None, "default", "default-preemption", id="PreemptionAsync"
        ),
        pytest.param(
            "PreemptionAsync", "legacy-3cpu", "default", "legacy-3cpu", id="PreemptionAsync-legacy"
        ),
    ],
)
def test_the_preemptor_goes_where_upstream_puts_it(
    name: str, template: str | None, measured: str, churn: str | None
) -> None:
    # PreemptionBasic measures the preemptors (createPods collectMetrics); PreemptionAsync
    # measures default pods while preemptors arrive by churn.
    wl = bench.workload(name, 10, 40, 10, template)
    by_name = {**bench.PREEMPTOR_TEMPLATES, "default": (bench.POD_DEFAULT, 0)}
    assert wl.measured_template == by_name[measured]
    assert wl.churn == (None if churn is None else by_name[churn])
    assert wl.init_template == (bench.POD_LOW_PRIORITY, 0)
    assert wl.preemptor_template == (template or "default-preemption")


@pytest.mark.parametrize(
    ("name", "template", "error"),
    [
        pytest.param(
            "SchedulingBasic",
            "legacy-3cpu",
            "SchedulingBasic has no preemptor (only PreemptionBasic, PreemptionAsync have one)",
            id="a workload without a preemptor",
        ),
        pytest.param(
            "PreemptionBasic",
            "huge",
            "unknown preemptor template 'huge' (known: default-preemption, legacy-3cpu)",
            id="an unknown template",
        ),
    ],
)
def test_bad_preemptor_template(name: str, template: str, error: str) -> None:
    with pytest.raises(ValueError) as info:
        bench.workload(name, preemptor_template=template)
    assert str(info.value) == error


def test_workloads_without_a_preemptor_say_so() -> None:
    assert bench.workload("Unschedulable").preemptor_template is None
    result = bench.run(bench.workload("SchedulingBasic", 5, 0, 5))
    assert "preemptorTemplate" not in result.as_dict()


@pytest.mark.parametrize(
    ("template", "victims"),
    [
        # A node (4000m) holds four 900m low pods: 400m free. The preemptor needs
        # 3970m <= 4000m - 900m * k for the k low pods that stay: k = 0, all four go.
        pytest.param("default-preemption", 4, id="3970m evicts all four"),
        # 3000m <= 4000m - 900m * k: k = 1 stays, three go.
        pytest.param("legacy-3cpu", 3, id="3 CPU evicts three"),
    ],
)
def test_each_preemptor_evicts_what_upstream_arithmetic_says(
    template: str, victims: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    sims: list[Simulation] = []

    class Kept(Simulation):
        def __post_init__(self) -> None:
            super().__post_init__()
            sims.append(self)

    monkeypatch.setattr(bench, "Simulation", Kept)
    result = bench.run(bench.workload("PreemptionBasic", 5, 20, 5, template))
    assert (result.scheduled, result.preemptions) == (5, 5)
    assert [len(p.victims) for p in sims[0].record.preemptions] == [victims] * 5
    assert result.as_dict()["preemptorTemplate"] == template
