"""Rewrite the golden files from the current source tree: ``scripts/regenerate-golden``.

    scripts/regenerate-golden --overwrite [--records DIR]

Without ``--overwrite`` it refuses (exit 2) and writes nothing: the golden tests
exist to catch changed decisions, and regenerating makes any change pass. Run it
only when a change is meant to alter an example's output or a bench decision, and
say why in the commit (``git diff --stat tests/golden`` shows what moved).

It also refuses (exit 1, nothing written) when the default paths and ``--exact``
disagree on any case: that is a bug in a fast path, not a new golden value.

``--records DIR`` writes each bench case's full decision record (the text the
digest hashes) to ``DIR/<case id>.txt`` and nothing else; run it in two trees and
``diff -r`` the directories to see which decisions a change moved.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from tests.golden import bench_cases, examples_cases


def _examples() -> tuple[dict[Path, bytes], list[str]]:
    out: dict[Path, bytes] = {}
    errors = []
    for case in examples_cases.cases():
        default = examples_cases.simulate_json(case, exact=False)
        exact = examples_cases.simulate_json(case, exact=True)
        if default != exact:
            errors.append(f"{case.id}: the default paths and --exact print different output")
        out[case.stored] = default
        print(f"example {case.id}: {len(default)} bytes", flush=True)
    return out, errors


def _bench() -> tuple[dict[str, object], list[str]]:
    out: dict[str, object] = {}
    errors = []
    for case in bench_cases.CASES:
        got = bench_cases.digest(bench_cases.decisions(case, exact=False))
        if case.exact_too and bench_cases.digest(bench_cases.decisions(case, exact=True)) != got:
            errors.append(f"{case.id}: the default paths and --exact decide differently")
        out[case.id] = got
        print(f"bench {case.id}: {got}", flush=True)
    return out, errors


def _records(directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for case in bench_cases.CASES:
        lines = bench_cases.decisions(case, exact=False)
        path = directory / (re.sub(r"[^A-Za-z0-9_.=-]+", "_", case.id) + ".txt")
        path.write_text("\n".join(lines) + "\n")
        print(f"wrote {path} ({len(lines)} lines)", flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="scripts/regenerate-golden",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--overwrite", action="store_true", help="really rewrite tests/golden")
    ap.add_argument("--records", metavar="DIR", type=Path, help="write bench records only")
    args = ap.parse_args(argv)
    if args.records is not None:
        _records(args.records)
        return 0
    if not args.overwrite:
        print(
            "refusing to regenerate the golden files without --overwrite: they pin "
            "today's decisions, and regenerating makes any change pass "
            "(check them with: pytest tests/golden)",
            file=sys.stderr,
        )
        return 2
    examples, errors = _examples()
    digests, bench_errors = _bench()
    errors += bench_errors
    if errors:
        print("\n".join(["nothing written:", *errors]), file=sys.stderr)
        return 1
    for stale in examples_cases.STORED.rglob("*.json"):
        if stale not in examples:
            stale.unlink()
    for path, data in examples.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    bench_cases.STORED.write_text(json.dumps(digests, indent=2) + "\n")
    print(f"wrote {len(examples)} example outputs and {len(digests)} bench digests")
    return 0


if __name__ == "__main__":
    sys.exit(main())
