"""The HTML report (report/html.py) opened in a real headless Chromium (Debian's
``chromium``): every plot drew its SVG with marks in it, the page logged nothing
to the console, and a screenshot is saved under ``test-output/`` (CI keeps it
as an artifact). Skipped where no Chromium is installed."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from kubesched.cli.main import main
from kubesched.report.html import render

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "preemption" / "pdb-steering.yaml"
OUTPUT = ROOT / "test-output"
PLOTS = ("timeline", "pending", "allocation", "delay", "victims")


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("no Chromium installed (Debian: apt-get install chromium)")


def headless(browser: str, url: str, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--virtual-time-budget=10000",
            "--enable-logging=stderr",
            "--v=0",
            "--window-size=1280,3200",
            *extra,
            url,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


class _Resources(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name in ("src", "href") and value and not value.startswith("#"):
                self.found.append(f"{tag} {name}={value}")


def external_resources(page: str) -> list[str]:
    """Every src/href of the page's tags that is not an anchor on the page."""
    parser = _Resources()
    parser.feed(page)
    return parser.found


def write_report(tmp_path: Path) -> Path:
    page = tmp_path / "report.html"
    r = CliRunner().invoke(
        main, ["simulate", "-f", str(EXAMPLE), "--explain", "--report", str(page)]
    )
    assert r.exit_code == 0, r.output
    return page


def test_every_plot_renders_in_chromium(tmp_path: Path) -> None:
    assert_drawn_in_chromium(write_report(tmp_path), PLOTS, "report-screenshot.png")


def assert_drawn_in_chromium(page: Path, plots: tuple[str, ...], screenshot: str) -> None:
    """Open ``page`` in headless Chromium: every plot of ``plots`` (div ids, in page
    order) drew an SVG with marks, nothing was logged to the console; then save a
    screenshot as ``test-output/<screenshot>``."""
    browser = chromium()
    dom = headless(browser, page.as_uri(), "--dump-dom")
    assert dom.returncode == 0, dom.stderr[-2000:]
    html = dom.stdout
    for i, plot in enumerate(plots):
        start = html.index(f'id="{plot}"')
        stop = html.find('<div class="plot">', start) if i + 1 < len(plots) else None
        block = html[start:stop]
        assert '<svg class="main-svg"' in block, f"{plot}: no SVG drawn"
        marks = len(re.findall(r'class="(?:point|trace bars|trace scatter|trace boxes)', block))
        assert marks > 0, f"{plot}: an empty plot"
    console = [ln for ln in dom.stderr.splitlines() if "CONSOLE" in ln or "Uncaught" in ln]
    assert console == []
    OUTPUT.mkdir(exist_ok=True)
    shot = OUTPUT / screenshot
    taken = headless(browser, page.as_uri(), f"--screenshot={shot}")
    assert taken.returncode == 0 and shot.stat().st_size > 10_000


def test_the_report_is_self_contained_and_deterministic(tmp_path: Path) -> None:
    page = write_report(tmp_path).read_text()
    assert page == write_report(tmp_path).read_text()
    assert external_resources(page) == []  # plotly.js is inlined
    for plot in PLOTS:
        assert f'id="{plot}"' in page
    assert 'href="#why-default/api-server"' in page  # preemption linked to its explanation


def test_report_command_reads_a_saved_result(tmp_path: Path) -> None:
    runner = CliRunner()
    saved = runner.invoke(main, ["simulate", "-f", str(EXAMPLE), "-o", "json", "--show", "nodes"])
    (tmp_path / "result.json").write_text(saved.stdout)
    doc: dict[str, Any] = json.loads(saved.stdout)
    r = runner.invoke(
        main, ["report", str(tmp_path / "result.json"), "-o", str(tmp_path / "r.html")]
    )
    assert r.exit_code == 0, r.output
    assert (tmp_path / "r.html").read_text() == render(doc)
    bad = runner.invoke(main, ["report", str(EXAMPLE), "-o", str(tmp_path / "x.html")])
    assert bad.exit_code == 2
    assert "not a SimulationResult document" in bad.stderr
