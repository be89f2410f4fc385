"""``kubesched explain``: run a scenario (or a live cluster's state) and tell
why a pod is where it is: every scheduling attempt, why it failed (the node ×
plugin diagnosis), what preemption nominated, and why the node it got.

``-o text`` (default) reads like ``kubectl describe pod``; ``-o json`` prints
the pod's ``pods[]`` entry and its ``explanations`` entry of the
SimulationResult (docs/result-format.md).
"""

from __future__ import annotations

import json
from typing import Any

import click

from kubesched.api.errors import InputError
from kubesched.cli.params import DURATION, SIZE, cluster_options, runspec_from_options
from kubesched.explain.recorder import ExplanationRecorder
from kubesched.sim.scenario import Run


def pending_reasons(recorder: ExplanationRecorder) -> dict[str, str]:
    """uid -> the dominant reason of the pod's latest failed attempt (for the
    REASON column of pending pods)."""
    out: dict[str, str] = {}
    for uid in recorder.pods:
        last = recorder.last_failure(uid)
        if last is not None:
            out[uid] = last.get("dominantReason") or last["message"]
    return out


def _split(pod: str, namespace: str) -> tuple[str, str]:
    if "/" in pod:
        ns, _, name = pod.partition("/")
        return ns, name
    return namespace, pod


@click.command()
@click.argument("pod")
@click.option("-f", "--filename", "files", multiple=True, help="As simulate's -f; repeatable.")
@click.option(
    "-n", "--namespace", default="default", show_default=True, help="The pod's namespace."
)
@click.option("--config", "config_file", default=None, help="A KubeSchedulerConfiguration file.")
@click.option("--seed", default=0, show_default=True, type=int, help="Seeds every random choice.")
@click.option(
    "--until", default=None, type=DURATION, help="Stop the simulated clock here (e.g. 90s)."
)
@click.option("--feature-gates", default="", help="As simulate's.")
@click.option(
    "-o", "--output", default="text", show_default=True, type=click.Choice(["text", "json"])
)
@click.option(
    "--from-cluster",
    is_flag=True,
    help="Start from a live cluster's state (as `kubesched snapshot` reads it).",
)
@click.option("--max-input-bytes", default="512Mi", show_default=True, type=SIZE)
@cluster_options
def explain(
    pod: str,
    files: tuple[str, ...],
    namespace: str,
    output: str,
    from_cluster: bool,
    kubeconfig: str | None,
    context: str | None,
    **flags: Any,  # the rest of the RunSpec's flags: runspec_from_options reads them
) -> None:
    """Why POD (NAME or NAMESPACE/NAME) is pending, or why it went where it did."""
    from kubesched.cli.explain_text import describe
    from kubesched.cli.input import load_input
    from kubesched.sim import runspec

    if not files and not from_cluster:
        raise InputError("-f: required (or --from-cluster)")
    spec = runspec_from_options()
    loaded = load_input(spec, from_cluster, kubeconfig, context)
    run = runspec.execute(spec, loaded, explain=True)
    doc = run.result()
    ns, name = _split(pod, namespace)
    me = f"{ns}/{name}"
    lives = [p for p in doc["pods"] if p["namespace"] == ns and p["name"] == name]
    if not lives:
        raise InputError(f"pod {ns}/{name}: not found in the run")
    by_uid = {e["uid"]: e for e in doc["explanations"]}
    fits = _what_would_fit(run, ns, name)
    out = click.get_text_stream("stdout")
    if output == "json":
        entries: list[dict[str, Any]] = [
            {"pod": p, "explanation": by_uid.get(p["uid"])} for p in lives
        ]
        for e in entries:
            if e["pod"]["uid"] in fits:
                e["whatWouldFit"] = fits[e["pod"]["uid"]]
        # the preemptions the pod took part in
        for e in entries:
            e["preemptions"] = [
                p for p in doc["preemptions"] if p["preemptor"] == me or me in p["victims"]
            ]
        out.write(json.dumps(entries, indent=2) + "\n")
        return
    related = [p for p in doc["preemptions"] if p["preemptor"] == me or me in p["victims"]]
    out.write(
        "\n".join(describe(p, by_uid.get(p["uid"]), related, fits.get(p["uid"])) for p in lives)
    )


def _what_would_fit(run: Run, namespace: str, name: str) -> dict[str, dict[str, Any]]:
    """uid -> ``what_would_fit`` for the pod if it is still Pending at the end."""
    from kubesched.explain.counterfactual import what_would_fit

    pod = run.cluster.get_pod(namespace, name)
    if pod is None or pod.node_name:
        return {}
    scheduler = run.simulation.scheduler
    fwk = scheduler.profiles.get(pod.spec.scheduler_name)
    if fwk is None:
        return {}
    return {pod.uid: what_would_fit(fwk, pod, scheduler.cache.table.ordered_infos())}
