"""Rewrite the golden files from the current source tree: ``scripts/regenerate-golden``.

    scripts/regenerate-golden --overwrite

Without ``--overwrite`` it refuses (exit 2) and writes nothing: the golden tests
exist to catch changed decisions, and regenerating makes any change pass. Run it
only when a change is meant to alter an example's output or a bench decision, and
say why in the commit (``git diff --stat tests/golden`` shows what moved).

It also refuses (exit 1, nothing written) when the default paths and ``--exact``
disagree on any case: that is a bug in a fast path, not a new golden value.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tests.golden import examples_cases


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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="scripts/regenerate-golden",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--overwrite", action="store_true", help="really rewrite tests/golden")
    args = ap.parse_args(argv)
    if not args.overwrite:
        print(
            "refusing to regenerate the golden files without --overwrite: they pin "
            "today's decisions, and regenerating makes any change pass "
            "(check them with: pytest tests/golden)",
            file=sys.stderr,
        )
        return 2
    examples, errors = _examples()
    if errors:
        print("\n".join(["nothing written:", *errors]), file=sys.stderr)
        return 1
    for stale in examples_cases.STORED.rglob("*.json"):
        if stale not in examples:
            stale.unlink()
    for path, data in examples.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    print(f"wrote {len(examples)} example outputs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
