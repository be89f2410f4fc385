"""SchedulingBasic of upstream scheduler_perf, on the simulated cluster.

Upstream workload (test/integration/scheduler_perf, ``SchedulingBasic``):
``initNodes`` nodes of 4 CPU / 32Gi / 110 pods labelled
``kubernetes.io/hostname``, ``initPods`` pods scheduled first (not measured),
then ``measurePods`` pods whose scheduling is timed; every pod requests
100m CPU and 500Mi memory; the default profile.

Usage::

    .venv/bin/python benchmarks/basic_perf.py 5000 2000            # nodes, measured pods
    .venv/bin/python benchmarks/basic_perf.py 500 1000 5000 15000 --pods 2000
    .venv/bin/python benchmarks/basic_perf.py 5000 2000 --profile   # cProfile, top 35
    .venv/bin/python benchmarks/basic_perf.py 5000 2000 --record /tmp/a.txt
    .venv/bin/python benchmarks/basic_perf.py 5000 2000 --compare /tmp/a.txt

Wall and CPU time are reported (the best of ``--repeat`` runs); on a busy
machine the CPU-time rate is the steadier one. On the shared 2-core machines
results vary by up to 2x from minute to minute: compare versions by running
them alternately (``PYTHONPATH=<other tree>/src`` selects another tree), pinned
to one core (``taskset -c 1``).

``--tiny F`` gives a fraction F of the nodes 50m CPU so that no pod fits them:
not upstream's workload, but it makes every cycle scan past failing nodes
(several chunks, failure statuses), the path the basic workload never takes.

``--record`` writes one ``pod node`` line per pod (init and measured) so two
versions of the scheduler can be compared decision by decision; ``--compare``
exits 1 when any pod landed elsewhere. Only ``sim.run()`` of the measured
pods is timed (nodes and init pods are delivered to the scheduler first).
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time

from kubesched.api.types import Container, Node, Pod, PodSpec
from kubesched.scheduler.config import default_config
from kubesched.scheduler.registry import in_tree_registry
from kubesched.sim.simulation import Simulation

GI = 2**30
MI = 2**20


def build(nodes: int, init_pods: int, tiny: float = 0.0) -> Simulation:
    """A simulation with the nodes created and the init pods already scheduled.

    ``tiny``: this fraction of the nodes (spread evenly) has 50m CPU, so no pod
    fits them: every cycle then records failure statuses for the nodes it scans
    (not part of the upstream workload; a stress case for the failure path)."""
    reg = dict(in_tree_registry())
    sim = Simulation(default_config(supported=reg.keys()), reg, seed=0)
    for i in range(nodes):
        name = f"node-{i}"
        cpu = 50 if int((i + 1) * tiny) != int(i * tiny) else 4000
        sim.cluster.create_node(
            Node(
                name,
                labels={"kubernetes.io/hostname": name},
                allocatable={"cpu": cpu, "memory": 32 * GI, "pods": 110},
            )
        )
    _create_pods(sim, "init-pod", init_pods)
    sim.run()
    return sim


def _create_pods(sim: Simulation, prefix: str, count: int) -> None:
    spec = PodSpec(containers=(Container("c", requests={"cpu": 100, "memory": 500 * MI}),))
    for i in range(count):
        sim.cluster.create_pod(Pod(f"{prefix}-{i}", spec=spec))
    sim.cluster.flush()  # deliver the adds: only scheduling is timed


def decisions(sim: Simulation) -> list[tuple[str, str]]:
    return sorted((p.key, p.node_name) for p in sim.cluster.pods.values())


def run_one(
    nodes: int, init_pods: int, pods: int, profile: bool, tiny: float = 0.0
) -> tuple[float, float, Simulation]:
    sim = build(nodes, init_pods, tiny)
    _create_pods(sim, "pod", pods)
    if profile:
        prof = cProfile.Profile()
        prof.enable()
        sim.run()
        prof.disable()
        pstats.Stats(prof).sort_stats("tottime").print_stats(35)
        pstats.Stats(prof).sort_stats("cumulative").print_stats(45)
        return 0.0, 0.0, sim
    c0 = time.process_time()
    t0 = time.perf_counter()
    sim.run()
    return time.perf_counter() - t0, time.process_time() - c0, sim


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("nodes", type=int, nargs="*", default=[5000])
    ap.add_argument("--pods", type=int, default=None, help="measured pods (default 2000)")
    ap.add_argument("--init-pods", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=1, help="runs per size; the best is shown")
    ap.add_argument(
        "--tiny", type=float, default=0.0, help="fraction of nodes no pod fits (stress case)"
    )
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--record", help="write 'pod node' lines of the (last) run here")
    ap.add_argument("--compare", help="diff this run's decisions against a --record file")
    args = ap.parse_args(argv)
    sizes = list(args.nodes)
    pods = args.pods
    if pods is None:
        # Backwards-compatible with /tmp/perf/basic.py: "NODES PODS".
        if len(sizes) == 2 and sizes[1] < sizes[0]:
            sizes, pods = [sizes[0]], sizes[1]
        else:
            pods = 2000
    rc = 0
    for n in sizes:
        best = best_cpu = float("inf")
        sim: Simulation | None = None
        for _ in range(args.repeat):
            dt, cpu, sim = run_one(n, args.init_pods, pods, args.profile, args.tiny)
            best = min(best, dt)
            best_cpu = min(best_cpu, cpu)
        assert sim is not None
        bound = sum(1 for p in sim.cluster.pods.values() if p.node_name)
        if not args.profile:
            print(
                f"nodes={n} init={args.init_pods} pods={pods} bound={bound} "
                f"wall={best:.3f}s pods/s={pods / best:.0f} us/pod={best / pods * 1e6:.0f} "
                f"(cpu: pods/s={pods / best_cpu:.0f})",
                flush=True,
            )
        got = decisions(sim)
        if args.record:
            with open(args.record, "w") as f:
                f.writelines(f"{k} {v}\n" for k, v in got)
        if args.compare:
            with open(args.compare) as f:
                want = [tuple(line.split()) for line in f if line.strip()]
            diff = [(w, g) for w, g in zip(want, got, strict=False) if tuple(w) != g]
            if diff or len(want) != len(got):
                print(f"DECISIONS DIFFER: {len(diff)} pods, {len(want)} vs {len(got)} lines")
                for w, g in diff[:10]:
                    print(f"  want {w} got {g}")
                rc = 1
            else:
                print(f"decisions identical ({len(got)} pods)")
    return rc


if __name__ == "__main__":
    sys.exit(main())
