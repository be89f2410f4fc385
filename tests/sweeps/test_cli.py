"""``kubesched sweep`` on the command line: files in each format (the same inputs
give the same bytes), the summary, bad flags, and a machine without the extra."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner, Result

from kubesched import sweeps
from kubesched.cli.main import main
from kubesched.sweeps.stats import mean_ci

distributed = pytest.importorskip("distributed")


def sweep(*args: str) -> Result:
    return CliRunner().invoke(main, ["sweep", *args])


@pytest.fixture(scope="module")
def files(
    cluster: distributed.LocalCluster,
    trace: str,
    config_file: str,
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, Path]:
    """One sweep written in every format (twice, to compare bytes)."""
    out = tmp_path_factory.mktemp("out")
    written: dict[str, Path] = {}
    for fmt in ("csv", "parquet", "json"):
        for n in (1, 2):
            rows, summary = out / f"rows{n}.{fmt}", out / f"summary{n}.{fmt}"
            result = sweep(
                "--trace", trace, "--config", config_file, "--config", "missing.yaml",
                "--seeds", "0-3", "--param", "sample=4,9", "--param", "no-deletions=true",
                "--scheduler-address", cluster.scheduler_address,
                "-o", str(rows), "--summary", str(summary), "--report", str(out / "sweep.html"),
            )  # fmt: skip
            assert result.exit_code == 0, result.output
            written[f"rows{n}.{fmt}"], written[f"summary{n}.{fmt}"] = rows, summary
    written["html"] = out / "sweep.html"
    written["stdout"] = Path(out / "stdout.txt")
    written["stdout"].write_text(result.stdout + "\n--\n" + result.stderr)
    return written


@pytest.mark.parametrize("fmt", ["csv", "parquet", "json"])
def test_the_same_sweep_writes_the_same_bytes(files: dict[str, Path], fmt: str) -> None:
    for table in ("rows", "summary"):
        assert files[f"{table}1.{fmt}"].read_bytes() == files[f"{table}2.{fmt}"].read_bytes()


def test_the_formats_hold_the_same_table(files: dict[str, Path], config_file: str) -> None:
    csv = pd.read_csv(files["rows1.csv"], keep_default_na=False, na_values=[""])
    parquet = pd.read_parquet(files["rows1.parquet"])
    records = json.loads(files["rows1.json"].read_text())
    assert list(csv.columns) == list(parquet.columns) == list(records[0])
    assert list(csv.columns[:5]) == ["config", "sample", "no-deletions", "seed", "pods"]
    assert list(csv.columns[-1:]) == ["error"]
    assert len(csv) == len(parquet) == len(records) == 2 * 2 * 4
    assert [r["config"] for r in records] == [config_file] * 8 + ["missing.yaml"] * 8
    assert [r["seed"] for r in records[:8]] == [0, 1, 2, 3] * 2
    for i, r in enumerate(records):
        assert r["sample"] == str(parquet["sample"][i]) == str(csv["sample"][i])
        for m in ("pods", "scheduled", "pending", "delay.p99"):
            if r["error"] is None:
                assert r[m] == parquet[m][i] == csv[m][i]
            else:
                assert pd.isna(parquet[m][i]) and pd.isna(csv[m][i])
    assert {r["pods"] for r in records[:8]} == {4, 9}
    assert {r["error"] for r in records[8:]} == {
        "InputError: missing.yaml: no such file or directory"
    }


def test_the_summary_is_mean_and_ci_of_the_rows(files: dict[str, Path]) -> None:
    rows = json.loads(files["rows1.json"].read_text())
    summary = json.loads(files["summary1.json"].read_text())
    line = next(s for s in summary if s["metric"] == "scheduled" and s["sample"] == "9")
    values = [r["scheduled"] for r in rows if r["sample"] == "9" and r["error"] is None]
    mean, low, high = mean_ci(values)
    assert (line["runs"], line["failed"], line["mean"]) == (4, 0, mean)
    assert (line["ci95_low"], line["ci95_high"]) == (low, high)
    failed = next(s for s in summary if s["config"] == "missing.yaml")
    assert (failed["runs"], failed["failed"], failed["mean"]) == (0, 4, None)
    page = files["html"].read_text()
    assert "<h1>kubesched sweep</h1>" in page
    assert "<td>config sample=9 no-deletions=true</td>" in page
    varies = [s for s in summary if s["ci95_high"] is not None and s["ci95_high"] > s["mean"]]
    assert varies, "some figure should vary across seeds"
    for s in varies:
        assert f" ± {s['ci95_high'] - s['mean']:.2f}</td>" in page
    text = files["stdout"].read_text()
    assert "METRIC" in text and "95% CI" in text
    assert "16 runs, 8 failed" in text
    assert "error: InputError: missing.yaml: no such file or directory" in text


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--trace", "openb:x", "--param", "sample=0"], 'sample: "0" must be at least 1'),
        (["-f", "a.yaml", "--param", "sample=10"], "needs --trace"),
        (["--seeds", "9-1", "-f", "a.yaml"], "--seeds: "),
        ([], "-f or --trace: required"),
        (["-f", "-"], "cannot read stdin"),
        (["-f", "a.yaml", "-o", "rows.txt"], "--format csv|parquet|json"),
        (["-f", "a.yaml", "--scheduler-address", "tcp://h:1", "--workers", "2"], "--workers"),
    ],
)
def test_bad_flags_exit_2_with_one_line(args: list[str], message: str) -> None:
    result = sweep(*args)
    assert result.exit_code == 2
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_without_the_extra_one_line_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sweeps, "EXTRA", ("distributed", "kubesched_no_such_module"))
    result = sweep("-f", "a.yaml")
    assert result.exit_code == 2
    assert result.stderr == (
        "error: kubesched sweep needs the optional dependencies of the sweep extra "
        "(missing: kubesched_no_such_module): pip install 'kubesched[sweep]'\n"
    )


def test_importing_kubesched_and_its_cli_imports_no_dask_nor_pandas() -> None:
    code = (
        "import sys, kubesched, kubesched.cli.sweep_command, kubesched.sweeps.plan;"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in"
        " ('dask', 'distributed', 'pandas', 'pyarrow')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout == "[]\n"
    assert callable(__import__("kubesched").sweep)
