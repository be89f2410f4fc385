"""Hostile input through the real command line, in a child process under resource limits.

Each case must end with exit status 2 and one line on stderr, within
``MEMORY`` of address space and ``TIMEOUT`` seconds: a regression (a crash, a
traceback, memory or time without bound) fails here instead of taking CI down.
The cheap bad inputs, with their exact lines, are the corpus
(test_bad_input_corpus.py).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import pytest

resource = pytest.importorskip("resource")

ROOT = Path(__file__).resolve().parents[2]
MEMORY = 1 << 30  # address space of the child: far under what the inputs would take
TIMEOUT = 60

ENDLESS = (
    "import sys\n"
    "chunk = b'a: b\\n' * 65536\n"
    "try:\n"
    "    while True:\n"
    "        sys.stdout.buffer.write(chunk)\n"
    "except (BrokenPipeError, OSError):\n"
    "    pass\n"
)


def _limits(close_stdin: bool) -> Callable[[], None]:
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if close_stdin:
            os.close(0)

    return apply


def run(
    args: list[str],
    *,
    stdin: int | IO[Any] | None = subprocess.DEVNULL,
    close_stdin: bool = False,
    command: tuple[str, ...] = ("simulate", "-o", "json"),
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    return subprocess.run(
        [sys.executable, "-m", "kubesched.cli.main", *command, *args],
        stdin=None if close_stdin else stdin,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
        cwd=ROOT,
        env=env,
        preexec_fn=_limits(close_stdin),
    )


def assert_refused(proc: subprocess.CompletedProcess[str], expected: str) -> None:
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert proc.stdout == ""
    assert "Traceback" not in proc.stderr
    assert proc.stderr.splitlines() == [expected]


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize(
    ("device", "message"),
    [
        pytest.param("/dev/zero", "not a text file: NUL byte at offset 0", id="endless NUL bytes"),
        pytest.param("/dev/urandom", "", id="endless random bytes"),
    ],
)
def test_endless_binary_devices(device: str, message: str) -> None:
    if not os.path.exists(device):
        pytest.skip(f"no {device}")
    proc = run(["-f", device])
    assert proc.returncode == 2
    (line,) = proc.stderr.splitlines()
    assert line.startswith(f"error: {device}: ")
    assert message in line
    assert "NUL byte" in line or "not UTF-8 text" in line


def test_dev_zero_on_stdin() -> None:
    with open("/dev/zero", "rb") as zero:
        proc = run(["-f", "-"], stdin=zero)
    assert_refused(proc, "error: <stdin>: not a text file: NUL byte at offset 0")


def test_closed_stdin() -> None:
    assert_refused(run(["-f", "-"], close_stdin=True), "error: <stdin>: standard input is closed")


@pytest.mark.parametrize(
    ("args", "cap"),
    [
        pytest.param([], "512 MiB", id="the default cap"),
        pytest.param(["--max-input-bytes", "1Mi"], "1 MiB", id="a smaller cap"),
    ],
)
def test_endless_text_on_stdin_stops_at_the_cap(args: list[str], cap: str) -> None:
    with subprocess.Popen([sys.executable, "-c", ENDLESS], stdout=subprocess.PIPE) as gen:
        assert gen.stdout is not None
        try:
            proc = run(["-f", "-", *args], stdin=gen.stdout)
        finally:
            gen.kill()
    assert_refused(proc, f"error: <stdin>: input is larger than {cap} (--max-input-bytes)")


def test_a_huge_file_is_refused_without_reading_it(tmp_path: Path) -> None:
    path = tmp_path / "huge.yaml"
    with open(path, "wb") as f:
        f.truncate(8 << 30)  # sparse: 8 GiB that take no disk
    assert_refused(
        run(["-f", str(path)]), f"error: {path}: input is larger than 512 MiB (--max-input-bytes)"
    )


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        pytest.param(
            "deep.yaml",
            "a: " + "[" * 1_000_000 + "]" * 1_000_000 + "\n",
            "malformed YAML: line 1, column 515: nested more than 512 levels deep",
            id="a million nested YAML lists (a segfault in PyYAML's composer)",
        ),
        pytest.param(
            "deep.json",
            '{"a": ' + "[" * 1_000_000 + "]" * 1_000_000 + "}",
            "malformed JSON: nested more than 512 levels deep",
            id="a million nested JSON arrays",
        ),
        pytest.param(
            "big.json",
            '{"apiVersion": "v1", "kind": "Pod", "spec": {"priority": ' + "7" * 1_000_000 + "}}",
            "malformed JSON: integer has more than 4300 digits",
            id="a million-digit integer",
        ),
        pytest.param(
            "lol.yaml",
            "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
            + "".join(
                f"{c}: &{c} [" + ", ".join([f"*{p}"] * 10) + "]\n"
                for p, c in zip("abcdefghijkl", "bcdefghijklm", strict=True)
            ),
            # d's first *c takes the aliased share of decoded nodes to 2331/2350 > 0.99
            "malformed YAML: line 4, column 8: document contains excessive aliasing",
            id="billion laughs: 10^13 strings",
        ),
    ],
)
def test_documents_that_would_never_end(tmp_path: Path, name: str, text: str, message: str) -> None:
    path = write(tmp_path, name, text)
    assert_refused(run(["-f", path]), f"error: {path}: {message}")


def test_absurd_replicas(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "deploy.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n"
        "spec:\n  replicas: 2147483647\n  selector: {matchLabels: {app: web}}\n"
        "  template: {metadata: {labels: {app: web}}, spec: {containers: [{name: c}]}}\n",
    )
    assert_refused(
        run(["-f", path]),
        f"error: {path}: deployment default/web: spec.replicas: 2147483647 replicas would make "
        "more than 2000000 objects (--max-objects)",
    )


def test_millions_of_objects(tmp_path: Path) -> None:
    items = ",".join(["{}"] * 2_100_000)
    path = write(tmp_path, "many.json", '{"apiVersion":"v1","kind":"List","items":[' + items + "]}")
    assert_refused(run(["-f", path]), f"error: {path}: more than 2000000 objects (--max-objects)")


@pytest.mark.parametrize(
    "command",
    [
        pytest.param(("import", "openb"), id="kubesched import"),
        pytest.param(("simulate", "-o", "json", "--trace"), id="simulate --trace"),
    ],
)
def test_trace_files_are_read_within_the_cap(command: tuple[str, ...]) -> None:
    if not os.path.exists("/dev/zero"):
        pytest.skip("no /dev/zero")
    paths = ["openb:/dev/zero,/dev/zero"] if "--trace" in command else ["/dev/zero", "/dev/zero"]
    extra = [] if "--trace" in command else ["--stdout"]
    proc = run([*paths, *extra], command=command)
    assert_refused(proc, "error: /dev/zero: not a text file: NUL byte at offset 0")
