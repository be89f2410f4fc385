"""The comparison page and text (report/compare.py): in a real headless Chromium
every plot draws, and the document/table/page follow from the variants' results."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from kubesched.report.compare import Variant, comparison, render, text
from kubesched.sim.runspec import RunSpec, result_document
from tests.report.test_html import assert_drawn_in_chromium, external_resources

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "compare"
PLOTS = ("outcomes", "delay", "utilisation", "pending")


def example() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    variants, docs = [], []
    for name in ("least-allocated", "most-allocated"):
        config = str(EXAMPLE / f"{name}.yaml")
        spec = RunSpec(files=(str(EXAMPLE / "scenario.yaml"),), config_file=config)
        docs.append(result_document(spec, nodes=True))
        variants.append(Variant(name, config, 0, ""))
    return comparison(variants, docs), docs


def test_every_plot_renders_in_chromium(tmp_path: Path) -> None:
    doc, docs = example()
    page = tmp_path / "compare.html"
    page.write_text(render(doc, docs))
    assert_drawn_in_chromium(page, PLOTS, "compare-screenshot.png")


def test_page_is_self_contained_deterministic_and_marks_differences() -> None:
    doc, docs = example()
    page = render(doc, docs)
    assert page == render(*example())
    assert external_resources(page) == []
    differing = re.findall(r'<tr class="differs"><td>([^<]+)</td>', page)
    least, most = (v["metrics"] for v in doc["variants"])
    assert set(differing) == {m for m in least if least[m] != most.get(m)}
    for p in doc["placedDifferently"]:
        assert p["pod"] in page


def test_confidence_intervals_draw_error_bars() -> None:
    """A sweep's view: metrics are means and ``ci`` half-widths become error bars."""
    doc, _ = example()
    for v in doc["variants"]:
        v["ci"] = {"scheduled": 1.5}
    del doc["placedDifferently"]
    page = render(doc)
    assert '"error_y":{"array":[1.5,0,0,0],"type":"data"}' in page.replace(" ", "")
    assert " ± 1.5" in page
    assert 'id="pending"' not in page  # no results, no timeline


def test_text_lists_the_pods_placed_differently() -> None:
    doc, _ = example()
    out = text(doc)
    assert out.splitlines()[0].split() == ["METRIC", "least-allocated", "most-allocated"]
    assert f"{len(doc['placedDifferently'])} pod(s) placed differently" in out
    rows = out.split("\n\n")[-1].splitlines()[1:]
    assert [r.split()[0] for r in rows] == [p["pod"] for p in doc["placedDifferently"]]
