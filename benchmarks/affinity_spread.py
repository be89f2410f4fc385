"""Issue #4's scenario: 5,000 nodes, every pod with a topology spread constraint
and a required pod anti-affinity term. Reports the wall time of the vectorised
path and of the per-node path (``--exact`` or ``--per-node``) on the same pods.

    .venv/bin/python benchmarks/affinity_spread.py [--nodes 5000] [--pods 2000] [--exact]
"""

from __future__ import annotations

import argparse
import resource
import time

from kubesched.api.types import (
    Affinity,
    Container,
    LabelSelector,
    Node,
    Pod,
    PodAffinity,
    PodAffinityTerm,
    PodSpec,
    TopologySpreadConstraint,
)
from kubesched.scheduler.config import default_config
from kubesched.scheduler.registry import in_tree_registry
from kubesched.sim.simulation import Simulation

ZONES = 20


def spec(app: str) -> PodSpec:
    sel = LabelSelector(match_labels={"app": app})
    return PodSpec(
        containers=(Container("c", requests={"cpu": 100, "memory": 256 * 2**20}),),
        affinity=Affinity(
            pod_anti_affinity=PodAffinity(
                required=(PodAffinityTerm(sel, "kubernetes.io/hostname"),)
            )
        ),
        topology_spread_constraints=(
            TopologySpreadConstraint(1, "topology.kubernetes.io/zone", "DoNotSchedule", sel),
        ),
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--pods", type=int, default=2000)
    ap.add_argument("--apps", type=int, default=10, help="Distinct app labels (one spec each).")
    ap.add_argument("--exact", "--per-node", dest="per_node", action="store_true")
    args = ap.parse_args()
    registry = dict(in_tree_registry())
    sim = Simulation(default_config(supported=registry.keys()), registry)
    if args.per_node:
        for fwk in sim.scheduler.profiles.values():
            fwk.per_node = True
    for i in range(args.nodes):
        labels = {
            "kubernetes.io/hostname": f"node-{i}",
            "topology.kubernetes.io/zone": f"zone-{i % ZONES}",
        }
        sim.cluster.create_node(
            Node(
                f"node-{i}",
                labels=labels,
                allocatable={"cpu": 4000, "memory": 32 * 2**30, "pods": 110},
            )
        )
    sim.run()
    specs = [spec(f"app-{a}") for a in range(args.apps)]
    for i in range(args.pods):
        a = i % args.apps
        sim.cluster.create_pod(Pod(f"p-{i}", labels={"app": f"app-{a}"}, spec=specs[a]))
    t0 = time.perf_counter()
    sim.run()
    wall = time.perf_counter() - t0
    bound = sum(1 for p in sim.cluster.pods.values() if p.node_name)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    path = "per-node" if args.per_node else "vectorised"
    print(
        f"path={path} nodes={args.nodes} pods={args.pods} bound={bound} wall={wall:.2f}s "
        f"pods/s={args.pods / wall:.0f} peakRSS={rss:.0f}MiB"
    )


if __name__ == "__main__":
    main()
