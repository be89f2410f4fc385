"""The per-row dry-run answers of the batched dry run (``victim_cache.py``) decide
exactly as the per-node path.

Bursts of identical high-priority preemptors (one shared ``PodSpec`` per kind of
preemptor across all bursts, so they share spec facts and the kept answers)
run on the simulated cluster against low-priority pods with different grace
periods: nominations, victim deletions and bindings interleave with the dry
runs. Each scenario runs once
with ``per_node`` on every profile (the per-node reference) and once on the
default vector path; the result documents (pods, preemptions, events with their
messages, metrics) must be equal. Guards check that the vector run serves dry
runs from kept answers, and that breaking the cache's invalidation (by
nominated load, or by row change) makes some scenario differ.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Final

import pytest

from kubesched.api.types import NANOS, Container, Node, Pod, PodSpec
from kubesched.driver.report import build_result
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.nodetable import IntArray
from kubesched.framework.preemption.batch import VictimBatch
from kubesched.framework.preemption.dry_run import VictimBatcher
from kubesched.framework.preemption.victim_cache import VictimCache
from kubesched.framework.types import PodInfo
from kubesched.plugins.defaultpreemption import DefaultPreemption
from kubesched.scheduler.cache import Cache
from kubesched.scheduler.config import default_config
from kubesched.scheduler.registry import in_tree_registry
from kubesched.sim.simulation import Simulation
from tests.builders import make_node, make_pod
from tests.scheduler.harness import build_framework, in_tree_profile

MI: Final = 2**20
NODE_CPU: Final = (2000, 3000, 4000, 6000, 8000)
LOW_CPU: Final = (250, 500, 900, 1000, 1500)
GRACE: Final = (0, 0, 3, 10, 30)


def _spec(cpu_milli: int, grace: int | None = None) -> PodSpec:
    c = Container(
        "pause", image="registry.k8s.io/pause:3.10", requests={"cpu": cpu_milli, "memory": 64 * MI}
    )
    return PodSpec(containers=(c,), termination_grace_period_seconds=grace)


@dataclass(frozen=True)
class Burst:
    """``count`` preemptors created at ``at_ms``; each ``(cpu, priority)`` kind in
    ``kinds`` shares one PodSpec, and the kinds alternate pod by pod."""

    at_ms: int
    count: int
    kinds: tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class Scenario:
    """``nodes`` nodes of random CPU sizes filled with priority-0 pods of random
    sizes and grace periods (seeded by ``seed``), then the preemptor bursts."""

    seed: int
    nodes: int
    bursts: tuple[Burst, ...]
    run_for: bool = False  # some low pods finish on their own (frees nodes)


def build(sc: Scenario, *, exact: bool) -> Simulation:
    """The scenario's simulation, ready to run (nothing has run yet)."""
    rng = random.Random(sc.seed)
    reg = dict(in_tree_registry())
    sim = Simulation(default_config(supported=reg.keys()), reg, seed=sc.seed)
    for fwk in sim.scheduler.profiles.values():
        fwk.per_node = exact
    cluster = sim.cluster
    low_specs = {(cpu, g): _spec(cpu, g) for cpu in LOW_CPU for g in GRACE}
    sizes = [rng.choice(NODE_CPU) for _ in range(sc.nodes)]
    init: list[tuple[int, Pod, int | None]] = []
    for i, cpu in enumerate(sizes):
        free = cpu
        k = 0
        while True:
            size = rng.choice(LOW_CPU)
            if size > free:
                break
            free -= size
            spec = low_specs[(size, rng.choice(GRACE))]
            pod = Pod(f"low-{i}-{k}", spec=spec, priority=0, node_name=f"node-{i}")
            run_for = rng.choice((None, None, 7, 15)) if sc.run_for else None
            init.append((rng.choice((0, 1, 2)), pod, None if run_for is None else run_for * NANOS))
            k += 1

    def create_nodes() -> None:
        for i, cpu in enumerate(sizes):
            cluster.create_node(
                Node(f"node-{i}", allocatable={"cpu": cpu, "memory": 32 * 2**30, "pods": 110})
            )

    sim.engine.at(0, create_nodes)
    for t, pod, run_for in init:

        def create(pod: Pod = pod, run_for: int | None = run_for) -> None:
            cluster.create_pod(pod, run_for)

        sim.engine.at(t * NANOS, create)
    n = 0
    # One PodSpec per kind for the whole scenario: later bursts share the facts
    # (and the kept answers) of earlier ones.
    kinds = {k: _spec(k[0]) for b in sc.bursts for k in b.kinds}
    for burst in sc.bursts:
        specs = [(kinds[k], k[1]) for k in burst.kinds]
        pods = []
        for j in range(burst.count):
            spec, prio = specs[j % len(specs)]
            pods.append(Pod(f"high-{n}", spec=spec, priority=prio))
            n += 1

        def create_burst(pods: list[Pod] = pods) -> None:
            for p in pods:
                cluster.create_pod(p)

        sim.engine.at(burst.at_ms * NANOS // 1000, create_burst)
    return sim


def run(sc: Scenario, *, exact: bool) -> dict[str, Any]:
    """The result document of one run (pods, preemptions, events, metrics)."""
    sim = build(sc, exact=exact)
    stats = sim.run()
    return build_result(
        sim.record, seed=sc.seed, end_time=stats.end_time, metrics=sim.metrics.snapshot()
    )


SCENARIOS: Final = [
    pytest.param(
        Scenario(
            1,
            60,
            (
                Burst(5_000, 12, ((3000, 10),)),
                Burst(5_400, 8, ((3000, 10),)),
                Burst(12_000, 10, ((3000, 10),)),
            ),
        ),
        id="bursts of one 3-CPU preemptor spec at three times on 60 nodes",
    ),
    pytest.param(
        Scenario(
            2,
            90,
            (
                Burst(5_000, 16, ((2000, 10), (1500, 20))),
                Burst(9_000, 10, ((2000, 10), (1500, 20))),
            ),
        ),
        id="two preemptor specs and priorities interleaved on 90 nodes",
    ),
    pytest.param(
        Scenario(
            11,
            40,
            (
                Burst(5_000, 6, ((2500, 10),)),
                Burst(9_000, 6, ((2500, 10),)),
                Burst(16_000, 6, ((2500, 10),)),
                Burst(24_000, 8, ((2500, 10),)),
            ),
            run_for=True,
        ),
        id="four bursts of one spec while low pods finish on their own on 40 nodes",
    ),
    pytest.param(
        Scenario(4, 150, (Burst(5_000, 25, ((3000, 10),)), Burst(35_000, 15, ((3000, 10),)))),
        id="a large burst then a late one on 150 nodes",
    ),
]


@dataclass
class Counts:
    asked: int = 0
    computed: int = 0


@pytest.fixture
def counts(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counts]:
    """Counts the rows the batcher is asked for and the rows it computes."""
    got = Counts()
    call = VictimBatcher.__call__
    run_ = VictimBatcher._run
    answer = VictimBatcher._answer

    def counting_call(self: VictimBatcher, rows: IntArray) -> VictimBatch | None:
        got.asked += len(rows)
        return call(self, rows)

    def counting_run(self: VictimBatcher, rows: IntArray, cached: bool = False) -> Any:
        got.computed += len(rows)
        return run_(self, rows, cached)

    def counting_answer(self: VictimBatcher, rows: IntArray, nominated: Any) -> bool:
        got.computed += len(rows)
        return answer(self, rows, nominated)

    monkeypatch.setattr(VictimBatcher, "__call__", counting_call)
    monkeypatch.setattr(VictimBatcher, "_run", counting_run)
    monkeypatch.setattr(VictimBatcher, "_answer", counting_answer)
    yield got


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_vector_path_with_kept_answers_decides_as_the_exact_path(
    scenario: Scenario, counts: Counts
) -> None:
    exact = exact_result(scenario)
    assert counts.asked == 0, "the exact run used the batcher"
    vector = run(scenario, exact=False)
    assert exact["preemptions"], "the scenario preempts nothing"
    assert vector["preemptions"] == exact["preemptions"]
    assert vector["pods"] == exact["pods"]
    assert vector["events"] == exact["events"]
    assert vector == exact
    assert counts.asked > 0, "the vector run never asked the batcher"
    # Non-vacuity: some dry-run rows came from the kept answers.
    assert counts.computed < counts.asked, (counts.computed, counts.asked)


def _stale_ignoring_nominated(
    self: VictimCache, rows: IntArray, nominated: IntArray | None
) -> IntArray:
    out: IntArray = (~self.answered.take(rows)).nonzero()[0]
    return out


def _store_keeping_answers(
    original: Callable[[VictimCache, int, int, Any, bool], None],
) -> Callable[[VictimCache, int, int, Any, bool], None]:
    def store(self: VictimCache, row: int, priority: int, entry: Any, keep: bool) -> None:
        kept = bool(self.answered[row])
        original(self, row, priority, entry, keep)
        self.answered[row] = kept  # the row's answer survives its change

    return store


BREAKAGES: Final = [
    pytest.param("nominated", id="stale ignores the nominated load"),
    pytest.param("store", id="a row change does not drop the row's answer"),
]


@functools.cache
def exact_result(sc: Scenario) -> dict[str, Any]:
    """The per-node reference result of ``sc`` (computed once per session; the
    cache patches of the guards do not touch the exact path)."""
    return run(sc, exact=True)


def _vector_decides_otherwise(sc: Scenario) -> bool:
    """The vector run completes and decides otherwise than the exact one (a
    stale answer may instead name victim slots the row no longer has and break
    down: that does not count, the guard wants a wrong decision)."""
    try:
        return run(sc, exact=False) != exact_result(sc)
    except (AssertionError, IndexError, TypeError):
        return False


@pytest.mark.parametrize("breakage", BREAKAGES)
def test_a_broken_cache_is_caught(breakage: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Guards the scenario test: with one of the cache's invalidations removed,
    some scenario no longer decides as the exact path."""
    if breakage == "nominated":
        monkeypatch.setattr(VictimCache, "stale", _stale_ignoring_nominated)
    else:
        monkeypatch.setattr(VictimCache, "store", _store_keeping_answers(VictimCache.store))
    scenarios = [p.values[0] for p in SCENARIOS]
    assert any(_vector_decides_otherwise(sc) for sc in scenarios if isinstance(sc, Scenario)), (
        "no scenario notices the broken cache"
    )


def test_preemptors_of_one_spec_with_other_node_names_get_their_own_answers() -> None:
    """The kept dry-run answers also key on ``spec.nodeName``: NodeName reads it
    and it is not part of the spec, so a preemptor of the same spec naming
    another node must not reuse the first one's answers (found by the generic
    paths test, tests/runtime/test_paths_agree.py)."""
    cache = Cache()
    for i in range(2):
        cache.add_node(make_node(f"n{i}").capacity(cpu="1", memory="4Gi", pods=110).obj())
        cache.add_pod(make_pod(f"low{i}").req(cpu="1").node(f"n{i}").start_time(0).obj())
    fwks = []
    for per_node in (False, True):
        fwk = build_framework(in_tree_profile(), in_tree_registry(), table=cache.table)
        fwk.per_node = per_node
        fwks.append(fwk)
    template = make_pod("t").req(cpu="1").obj()
    potential = cache.table.ordered_infos()
    for name, node in (("p0", "n0"), ("p1", "n1")):
        pod = Pod(name, uid=name, spec=template.spec, priority=10, node_name=node)
        got = []
        for fwk in fwks:
            state, info = CycleState(), PodInfo(pod)
            assert fwk.run_pre_filter_plugins(state, info)[1].is_success()
            plugin = next(p for p in fwk.post_filter_plugins if isinstance(p, DefaultPreemption))
            cands, _, _ = plugin.evaluator.dry_run_preemption(state, info, potential, [], 0, 2)
            got.append([(c.name, [v.pod.name for v in c.victims.pods]) for c in cands])
        assert got[0] == got[1] == [(node, [f"low{node[1]}"])]
