"""One scenario under several configurations, side by side (``kubesched compare``).

``comparison(variants, docs)`` turns the SimulationResult of each variant into a
``SimulationComparison`` document (plain data, ``-o json``):

- ``variants[]``: ``name``, ``config`` (file or null for the defaults),
  ``seed``, ``featureGates`` and ``metrics`` (``report.metrics.run_metrics``);
- ``placedDifferently[]``: ``pod`` (namespace/name) and its ``placements``,
  one per variant, for every pod named in every variant whose placement is not
  the same in all of them; a placement is the node (``null`` when none) and,
  for a pod that was deleted, the deletion reason;
- ``unmatchedPods``: pods not named in every variant (generated names differ
  between seeds, so a comparison across seeds matches few pods).

``text`` renders the document as two tables; ``render`` as a self-contained
HTML page (Plotly, offline), which a sweep can also use: each variant may carry
``ci`` (metric -> half-width of a confidence interval), drawn as error bars.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import plotly.graph_objects as go

from kubesched.report.html import PALETTE, figure_html, page, pending_series
from kubesched.report.metrics import run_metrics

KIND: Final = "SimulationComparison"
API_VERSION: Final = "kubesched.io/v1alpha1"
CHARTS: Final = (
    ("outcomes", "Pods and preemptions", ("scheduled", "pending", "preempted", "preemptions")),
    ("delay", "Scheduling delay (s)", ("delay.p50", "delay.p99")),
    ("utilisation", "Requested share of allocatable at the end (%)", ("utilisation.*",)),
)
"""The bar charts of the page: id, heading, metrics (``P*``: every metric named P...)."""


@dataclass(frozen=True)
class Variant:
    name: str
    config: str | None
    seed: int
    feature_gates: str


def comparison(variants: Sequence[Variant], docs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The SimulationComparison of ``docs[i]``, the result of ``variants[i]``."""
    placed, unmatched = placed_differently(docs)
    return {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "variants": [
            {
                "name": v.name,
                "config": v.config,
                "seed": v.seed,
                "featureGates": v.feature_gates,
                "metrics": run_metrics(d),
            }
            for v, d in zip(variants, docs, strict=True)
        ],
        "placedDifferently": placed,
        "unmatchedPods": unmatched,
    }


def _placements(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """namespace/name -> placement of the pod's last life (latest created)."""
    out: dict[str, tuple[float, dict[str, Any]]] = {}
    for p in doc["pods"]:
        key = f"{p['namespace']}/{p['name']}"
        if key not in out or p["createdAt"] >= out[key][0]:
            out[key] = (p["createdAt"], {"node": p["nodeName"], "deleted": p["deletionReason"]})
    return {k: v for k, (_, v) in out.items()}


def placed_differently(docs: Sequence[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """The pods named in every document whose placements differ, by name; and
    how many pods are not named in every document."""
    each = [_placements(d) for d in docs]
    names = set().union(*each)
    common = sorted(n for n in names if all(n in e for e in each))
    placed = []
    for name in common:
        cells = [e[name] for e in each]
        if any(c != cells[0] for c in cells[1:]):
            placed.append({"pod": name, "placements": cells})
    return placed, len(names) - len(common)


def metric_names(doc: dict[str, Any]) -> list[str]:
    """Every metric of the variants, in first-seen order."""
    seen: dict[str, None] = {}
    for v in doc["variants"]:
        seen.update(dict.fromkeys(v["metrics"]))
    return list(seen)


def _value(v: float | None) -> str:
    if v is None:
        return "-"
    return f"{v:g}" if float(v).is_integer() else f"{v:.2f}"


def _cell(p: dict[str, Any]) -> str:
    node = p["node"] or "<none>"
    return f"{node} ({p['deleted']})" if p["deleted"] else node


def _table(rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "".join(
        "   ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() + "\n" for r in rows
    )


def text(doc: dict[str, Any]) -> str:
    """The metrics side by side, then the pods placed differently."""
    names = [v["name"] for v in doc["variants"]]
    rows = [["METRIC", *names]]
    for m in metric_names(doc):
        rows.append([m, *(_value(v["metrics"].get(m)) for v in doc["variants"])])
    out = _table(rows)
    placed = doc["placedDifferently"]
    out += f"\n{len(placed)} pod(s) placed differently"
    if doc["unmatchedPods"]:
        out += f" ({doc['unmatchedPods']} pod(s) not in every variant, not compared)"
    out += "\n"
    if placed:
        out += "\n" + _table(
            [["POD", *names], *([p["pod"], *map(_cell, p["placements"])] for p in placed)]
        )
    return out


def _bars(doc: dict[str, Any], metrics: Sequence[str]) -> go.Figure | None:
    """Grouped bars: one group per metric, one bar per variant (with ``ci`` error bars)."""
    present = [
        m
        for m in metric_names(doc)
        if any(m == w or (w.endswith("*") and m.startswith(w[:-1])) for w in metrics)
    ]
    present.sort(
        key=lambda m: next(i for i, w in enumerate(metrics) if m.startswith(w.rstrip("*")))
    )
    if not present:
        return None
    fig = go.Figure()
    for i, v in enumerate(doc["variants"]):
        ci = v.get("ci")
        fig.add_trace(
            go.Bar(
                name=v["name"],
                x=present,
                y=[v["metrics"].get(m) for m in present],
                marker_color=PALETTE[i % len(PALETTE)],
                error_y=None
                if ci is None
                else {"type": "data", "array": [ci.get(m, 0) for m in present]},
            )
        )
    fig.update_layout(barmode="group")
    return fig


def _pending(doc: dict[str, Any], docs: Sequence[dict[str, Any]]) -> go.Figure:
    fig = go.Figure()
    for i, (v, d) in enumerate(zip(doc["variants"], docs, strict=True)):
        xs, ys = pending_series(d, lambda _p: "all").get(
            "all", ([0.0, d["simulatedSeconds"]], [0, 0])
        )
        fig.add_trace(
            go.Scatter(
                name=v["name"], x=xs, y=ys, mode="lines", line_shape="hv",
                line_color=PALETTE[i % len(PALETTE)],
            )
        )  # fmt: skip
    fig.update_layout(xaxis_title="simulated seconds", yaxis_title="pending pods")
    return fig


def _html_table(doc: dict[str, Any]) -> str:
    head = "".join(f"<th>{html.escape(v['name'])}</th>" for v in doc["variants"])
    rows = []
    for m in metric_names(doc):
        values = [v["metrics"].get(m) for v in doc["variants"]]
        cells = []
        for v, x in zip(doc["variants"], values, strict=True):
            ci = (v.get("ci") or {}).get(m)
            cells.append(f"<td>{_value(x)}{f' ± {_value(ci)}' if ci else ''}</td>")
        differs = ' class="differs"' if len(set(values)) > 1 else ""
        rows.append(f"<tr{differs}><td>{html.escape(m)}</td>{''.join(cells)}</tr>")
    return f'<table class="compare"><tr><th>metric</th>{head}</tr>{"".join(rows)}</table>'


def _variants_table(doc: dict[str, Any]) -> str:
    rows = "".join(
        f"<tr><td>{html.escape(v['name'])}</td><td>{html.escape(v['config'] or '(defaults)')}</td>"
        f"<td>{v['seed']}</td><td>{html.escape(v['featureGates'] or '-')}</td></tr>"
        for v in doc["variants"]
    )
    return (
        "<table><tr><th>variant</th><th>config</th><th>seed</th><th>feature gates</th></tr>"
        f"{rows}</table>"
    )


def _placed_table(doc: dict[str, Any]) -> str:
    placed = doc["placedDifferently"]
    note = ""
    if doc["unmatchedPods"]:
        note = (
            f"<p>{doc['unmatchedPods']} pod(s) are not in every variant and are not compared.</p>"
        )
    if not placed:
        return f"<p>Every pod is placed the same way.</p>{note}"
    head = "".join(f"<th>{html.escape(v['name'])}</th>" for v in doc["variants"])
    rows = "".join(
        f"<tr><td>{html.escape(p['pod'])}</td>"
        + "".join(f"<td>{html.escape(_cell(c))}</td>" for c in p["placements"])
        + "</tr>"
        for p in placed
    )
    return f"<table><tr><th>pod</th>{head}</tr>{rows}</table>{note}"


def render(
    doc: dict[str, Any],
    docs: Sequence[dict[str, Any]] = (),
    title: str = "kubesched comparison",
) -> str:
    """The comparison page of ``doc``; with the variants' results ``docs``, also
    the pending pods over time and the pods placed differently."""
    body = [f"<h1>{html.escape(title)}</h1>", "<h2>Variants</h2>", _variants_table(doc)]
    body += ["<h2>Side by side</h2>", _html_table(doc)]
    figures: list[tuple[str, str, go.Figure | None]] = [
        (div_id, heading, _bars(doc, metrics)) for div_id, heading, metrics in CHARTS
    ]
    if docs:
        figures.append(("pending", "Pending pods over time", _pending(doc, docs)))
    first = True
    for div_id, heading, fig in figures:
        if fig is None:
            continue
        body += [f"<h2>{html.escape(heading)}</h2>", figure_html(fig, div_id, first)]
        first = False
    if "placedDifferently" in doc:
        body += ["<h2>Pods placed differently</h2>", _placed_table(doc)]
    return page(title, body)
