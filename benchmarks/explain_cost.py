"""What explanations cost: each workload with and without ``--explain``, side by side.

    .venv/bin/python benchmarks/explain_cost.py [--repeat 3] [--rows small|standard]

Each row runs ``kubesched bench WORKLOAD ... -o json`` in fresh processes of this
Python (the tree this file is in), alternating off, on, off, on, ... so that
both see the same machine; per side it keeps the least process CPU time (user +
system, from ``wait4``) and the peak RSS the bench reports. It prints the ratio
on/off of CPU time (issue 16's budget: at most 2.0 for SchedulingBasic and
PreemptionBasic) and of peak RSS, and checks that both sides took the same
decisions (scheduled, preemptions, cycles): recording must not change them.
The cost with explanations off is the ordinary ``benchmarks/compare.py`` of the
tree before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src"
if str(ROOT) not in sys.path:  # ``python benchmarks/explain_cost.py`` from a checkout
    sys.path.insert(0, str(ROOT))

from benchmarks.compare import bench_env, compile_tree  # noqa: E402

ROWS = {
    "standard": [
        ("SchedulingBasic", 5000, 1000, 3000),
        ("PreemptionBasic", 5000, 20000, 300),
        ("PreemptionAsync", 5000, 20000, 2000),
        ("Unschedulable", 5000, 20000, 2000),
    ],
    "small": [
        ("SchedulingBasic", 1000, 1000, 1000),
        ("PreemptionBasic", 1000, 4000, 300),
    ],
}
DECISIONS = ("scheduled", "preemptions", "cycles")


def timed(args: list[str]) -> tuple[float, dict[str, object]]:
    """Process CPU seconds (from ``wait4``) and the JSON document of one bench run."""
    cmd = [sys.executable, "-m", "kubesched.cli.main", "bench", *args, "-o", "json"]
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=bench_env(SRC)
    )
    assert proc.stdout is not None
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = status
    if status:
        sys.exit(f"{' '.join(args)}: failed ({status})")
    doc: dict[str, object] = json.loads(out.decode().strip().splitlines()[-1])
    return usage.ru_utime + usage.ru_stime, doc


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--rows", choices=sorted(ROWS), default="standard")
    args = parser.parse_args()
    compile_tree(SRC)
    print(
        "| workload | nodes | init | pods | cpu s off | cpu s on | cpu on/off "
        "| RSS MiB off | RSS MiB on | same decisions |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for workload, nodes, init, pods in ROWS[args.rows]:
        base = [workload, "--nodes", str(nodes), "--init-pods", str(init), "--pods", str(pods)]
        off: list[tuple[float, dict[str, object]]] = []
        on: list[tuple[float, dict[str, object]]] = []
        for _ in range(max(args.repeat, 1)):
            off.append(timed(base))
            on.append(timed([*base, "--explain"]))
        cpu_off = min(c for c, _ in off)
        cpu_on = min(c for c, _ in on)
        rss_off = max(float(str(d["peakRSSMiB"])) for _, d in off)
        rss_on = max(float(str(d["peakRSSMiB"])) for _, d in on)
        same = all(
            tuple(d[k] for k in DECISIONS) == tuple(off[0][1][k] for k in DECISIONS)
            for _, d in off + on
        )
        print(
            f"| {workload} | {nodes} | {init} | {pods} | {cpu_off:.2f} | {cpu_on:.2f} "
            f"| {cpu_on / cpu_off:.2f} | {rss_off:.0f} | {rss_on:.0f} | {same} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
