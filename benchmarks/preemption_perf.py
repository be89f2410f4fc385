"""The preemption workloads of ``kubesched bench``, with decision recording and profiling.

Runs exactly what ``kubesched bench`` runs (``kubesched.sim.bench.run``), but
keeps hold of the simulation so that every decision can be written out and
two versions of the scheduler compared decision by decision.

Usage::

    .venv/bin/python benchmarks/preemption_perf.py PreemptionBasic 1000 4000 1000
    .venv/bin/python benchmarks/preemption_perf.py PreemptionAsync 5000 20000 5000 \\
        --record /tmp/async.txt
    .venv/bin/python benchmarks/preemption_perf.py PreemptionBasic 1000 4000 1000 --profile
    .venv/bin/python -m pyinstrument -r text benchmarks/preemption_perf.py \\
        PreemptionBasic 1000 4000 1000

``--record FILE`` writes, after the run: one ``bind`` line per pod that ever
existed (pod, node it was bound to, deletion reason), one ``preempt`` line per
preemption (time, preemptor, nominated node, victims, PDB violations), one
``nominated`` line per live pod still carrying a nominated node, and one
``event`` line per recorded event (FailedScheduling messages carry the
FitError histograms and preemption messages). ``--compare FILE`` records to a
temporary file and exits 1 when it differs from FILE (first differing lines
are printed). ``--exact`` (or ``--per-node``) runs every plugin's per-node code only.
``--preemptor-template legacy-3cpu`` runs PreemptionBasic/PreemptionAsync with the
3 CPU preemptor kubesched used before upstream's (and its records were made with).
"""

from __future__ import annotations

import argparse
import cProfile
import difflib
import pstats
import sys
import tempfile
import time
from typing import Any

from kubesched.sim import bench
from kubesched.sim.simulation import Simulation

_LAST: list[Simulation] = []


_PROFILE: list[cProfile.Profile] = []


class _RecordingSimulation(Simulation):
    """The bench's Simulation, remembered so that its cluster can be read afterwards;
    with ``--profile`` the second ``run`` (the measured phase) is profiled."""

    def __post_init__(self) -> None:
        super().__post_init__()
        _LAST.append(self)
        self._runs = 0

    def run(self, *args: Any, **kwargs: Any) -> Any:
        self._runs += 1
        if _PROFILE and self._runs == 2:
            return _PROFILE[0].runcall(super().run, *args, **kwargs)
        return super().run(*args, **kwargs)


def record_lines(sim: Simulation) -> list[str]:
    """Every decision of the run as text lines (see the module docstring)."""
    record = sim.record
    out: list[str] = []
    for rec in record.lives.values():
        pod = rec.pod
        out.append(
            f"bind {pod.key} node={pod.node_name or '-'} sched={rec.scheduled_at} "
            f"deleted={rec.deleted_at} reason={rec.deletion_reason}"
        )
    for p in record.preemptions:
        out.append(
            f"preempt t={p.time} {p.preemptor} -> {p.node} "
            f"victims={','.join(p.victims)} pdb={p.num_pdb_violations}"
        )
    for key, pod in sim.cluster.pods.items():
        if pod.nominated_node_name:
            out.append(f"nominated {key} -> {pod.nominated_node_name}")
    for e in record.events:
        out.append(f"event t={e.time} {e.type} {e.reason} {e.object} {e.related} {e.message}")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("workload", choices=sorted(bench.WORKLOADS))
    ap.add_argument("nodes", type=int)
    ap.add_argument("init_pods", type=int)
    ap.add_argument("pods", type=int)
    ap.add_argument(
        "--preemptor-template",
        choices=sorted(bench.PREEMPTOR_TEMPLATES),
        default=None,
        help=f"default: {bench.DEFAULT_PREEMPTOR} (for PreemptionBasic and PreemptionAsync)",
    )
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--exact", "--per-node", dest="per_node", action="store_true")
    ap.add_argument(
        "--profile", action="store_true", help="cProfile the measured phase, top 45 by tottime"
    )
    ap.add_argument("--record", metavar="FILE")
    ap.add_argument("--compare", metavar="FILE")
    args = ap.parse_args(argv)

    wl = bench.workload(
        args.workload, args.nodes, args.init_pods, args.pods, args.preemptor_template
    )
    original = bench.Simulation
    bench.Simulation = _RecordingSimulation  # type: ignore[misc]
    try:
        t0 = time.perf_counter()
        if args.profile:
            _PROFILE.append(cProfile.Profile())
        result = bench.run(wl, seed=args.seed, per_node=args.per_node)
        if args.profile:
            pstats.Stats(_PROFILE[0]).sort_stats("tottime").print_stats(45)
        total = time.perf_counter() - t0
    finally:
        bench.Simulation = original  # type: ignore[misc]
    doc = result.as_dict()
    print(" ".join(f"{k}={v}" for k, v in doc.items()), f"total={total:.1f}s")
    sim = _LAST[-1]
    if args.record or args.compare:
        lines = record_lines(sim)
        text = "\n".join(lines) + "\n"
        if args.record:
            with open(args.record, "w") as f:
                f.write(text)
            print(f"recorded {len(lines)} lines to {args.record}")
        if args.compare:
            with open(args.compare) as f:
                want = f.read()
            if want != text:
                with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as tmp:
                    tmp.write(text)
                diff = difflib.unified_diff(
                    want.splitlines(), lines, args.compare, tmp.name, lineterm="", n=1
                )
                for i, line in enumerate(diff):
                    if i >= 40:
                        break
                    print(line)
                print(f"DIFFERENT (this run recorded to {tmp.name})")
                return 1
            print(f"identical to {args.compare} ({len(lines)} lines)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
