"""The bad-input corpus: every file of ``corpus/bad`` through ``kubesched simulate -f``.

``corpus/expected.json`` gives, for each file, the one line expected on stderr
after ``error: <path>: `` (and ``why`` where the wording needs a source): the
object and field named as the API server (or kubectl, or go-yaml) would, in
their words. Each case must exit 2 with exactly that line, nothing on stdout and
no traceback. The cases are small files run in-process; hostile input that
costs memory or time (endless streams, huge files) is in test_hostile_input.py,
in a child process under resource limits.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from kubesched.cli.main import main

CORPUS = Path(__file__).resolve().parent / "corpus"
BAD = CORPUS / "bad"
EXPECTED: dict[str, dict[str, Any]] = json.loads((CORPUS / "expected.json").read_text())

# Lines that depend on the file's path or need a flag, computed here.
SPECIAL: dict[str, tuple[list[str], str]] = {
    "duplicate.yaml": (
        [],
        "pod default/a: defined twice: first in {path} (object 0), again in {path} (object 1)",
    ),
    "too-many-objects.yaml": (["--max-objects", "4"], "more than 4 objects (--max-objects)"),
}


def test_the_corpus_is_large_and_complete() -> None:
    files = sorted(p.name for p in BAD.iterdir())
    assert len(files) >= 80
    assert files == sorted(EXPECTED)
    assert all((entry["error"] is None) == (name in SPECIAL) for name, entry in EXPECTED.items())


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_bad_input_gives_one_line_and_exit_2(name: str) -> None:
    path = BAD / name
    if name in SPECIAL:
        args, template = SPECIAL[name]
        expected = template.format(path=path)
    else:
        args, expected = [], EXPECTED[name]["error"]
    result = CliRunner().invoke(main, ["simulate", "-f", str(path), "-o", "json", *args])
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
    assert result.stderr.splitlines() == [f"error: {path}: {expected}"]
