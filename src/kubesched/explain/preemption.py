"""Why preemption chose that node and those victims: one attempt's
``PreemptionOutcome`` as plain data.

- where the dry run started among the potential nodes (``offset``) and how
  many candidates it looked for (``numCandidates``), how many it kept, and
  why the nodes it visited without finding a candidate were rejected
  (``dryRunRejected``: reason and node count);
- every kept candidate (at most ``MAX_CANDIDATES`` listed) with its victims
  and the values of upstream's criteria (pickOneNodeForPreemption, in order):
  fewest PDB violations, lowest highest-victim priority, smallest priority
  sum (each priority + 2^31, as upstream sums them), fewest victims, latest
  start time (the earliest start among the highest-priority victims);
- how the criteria narrowed the candidates (``narrowing``: each criterion
  that eliminated some, how many and a few names), which criterion separated
  the chosen candidate from the runner-up (the best candidate that criterion
  eliminated) and both values, or that the candidates left tied on all of
  them and one was drawn at random;
- each pod on the chosen node: victim, reprieved (the preemptor fits without
  evicting it), or not lower priority than the preemptor; and whether evicting
  it violates a PodDisruptionBudget (upstream reprieves those first).

The narrowing is the one ``candidates.pick`` runs, over the same criteria
matrix (``default_criteria``), so the reported criterion is the one that
decided.
"""

from __future__ import annotations

from typing import Any, Final

from kubesched.api.types import NANOS, Pod, Time
from kubesched.framework.preemption import Candidate, PreemptionOutcome
from kubesched.framework.preemption.candidates import Row, default_criteria
from kubesched.framework.preemption.victims import MIN_INT64, victim_stats_of

MAX_CANDIDATES: Final = 10
"""Candidates listed per attempt (the chosen one always is)."""

SAMPLE_ELIMINATED: Final = 5
"""Names listed of the candidates each criterion eliminated."""

CRITERIA: Final = (
    "fewest PDB violations",
    "lowest highest-victim priority",
    "smallest priority sum",
    "fewest victims",
    "latest start time",
)
"""Upstream's default criteria, in the order they are applied."""

_FIELDS: Final = (
    "pdbViolations",
    "highestPriority",
    "prioritySum",
    "numVictims",
    "earliestStartTime",
)


def why_preempted(outcome: PreemptionOutcome, preemptor: Pod, now: Time) -> dict[str, Any]:
    """The explanation of one preemption attempt that reached its dry run."""
    cs = outcome.candidate_set
    candidates = outcome.candidates
    out: dict[str, Any] = {
        "offset": outcome.offset,
        "numCandidates": outcome.num_candidates,
        "candidatesFound": len(candidates),
    }
    if outcome.statuses is not None:
        rejected: dict[str, int] = {}
        for status, n in outcome.statuses.status_counts():
            for r in status.reasons:
                rejected[r] = rejected.get(r, 0) + n
        out["dryRunRejected"] = [
            {"reason": r, "nodes": n}
            for r, n in sorted(rejected.items(), key=lambda kv: (-kv[1], kv[0]))
        ]
    if cs is None or not candidates:
        return out
    columns = cs.stats() or victim_stats_of([c.victims for c in candidates])
    rows: list[Row] = default_criteria(columns, now)
    values = [[int(row[i]) for row in rows] for i in range(len(candidates))]
    chosen = outcome.chosen
    index = -1
    if chosen is not None:
        index = next((i for i, c in enumerate(candidates) if c.name == chosen.name), -1)
    listed = list(range(min(len(candidates), MAX_CANDIDATES)))
    if index >= MAX_CANDIDATES:
        listed.append(index)
    out["candidates"] = [_candidate(candidates[i], values[i]) for i in listed]
    if index >= 0:
        out["chosen"] = candidates[index].name
        out.update(_decision(values, index, [c.name for c in candidates]))
        out["chosenNodePods"] = _node_pods(outcome, candidates[index], preemptor, now)
    return out


def _shown(k: int, score: int) -> int | float | None:
    """A criterion score as users read it: counts and priorities positive again,
    the start time in seconds (None: no victim)."""
    if k < 4:
        return -score
    return None if score <= MIN_INT64 else score / NANOS


def _candidate(c: Candidate, scores: list[int]) -> dict[str, Any]:
    return {
        "node": c.name,
        "victims": [f"{p.pod.namespace}/{p.pod.name}" for p in c.victims.pods],
        **{f: _shown(k, s) for k, (f, s) in enumerate(zip(_FIELDS, scores, strict=True))},
    }


def _decision(values: list[list[int]], chosen: int, names: list[str]) -> dict[str, Any]:
    """The criterion at which the narrowing left only the chosen candidate."""
    left = list(range(len(values)))
    if len(left) == 1:
        return {"decidedBy": "only candidate"}
    narrowing: list[dict[str, Any]] = []
    out: dict[str, Any] = {"narrowing": narrowing}
    for k, name in enumerate(CRITERIA):
        best = max(MIN_INT64, *(values[i][k] for i in left))
        kept = [i for i in left if values[i][k] == best]
        if chosen not in kept:
            out["decidedBy"] = None  # another order decided (a custom policy)
            return out
        dropped = [i for i in left if i not in kept]
        if dropped:
            narrowing.append(
                {
                    "criterion": name,
                    "eliminated": len(dropped),
                    "sampleEliminated": [names[i] for i in dropped[:SAMPLE_ELIMINATED]],
                }
            )
        if len(kept) == 1:
            runner = max(dropped, key=lambda i: (values[i][k], -i))
            out.update(
                decidedBy=name,
                chosenValue=_shown(k, values[chosen][k]),
                runnerUp=names[runner],
                runnerUpValue=_shown(k, values[runner][k]),
            )
            return out
        left = kept
    out.update(decidedBy="random tie-break", tiedCandidates=len(left))
    return out


def _node_pods(
    outcome: PreemptionOutcome, chosen: Candidate, preemptor: Pod, now: Time
) -> list[dict[str, Any]]:
    """Each pod on the chosen node and why it is or is not a victim; ``pdb``
    marks the lower-priority pods whose eviction would violate a
    PodDisruptionBudget, budgets shared along the victim order as upstream's
    filterPodsWithPDBViolation shares them."""
    victims = {p.pod.uid for p in chosen.victims.pods}
    violating: set[str] = set()
    order = outcome.order
    if order is not None:
        lower = [p for p in outcome.chosen_pods if p.pod.priority < preemptor.priority]
        lower.sort(key=order.sort_key(now))
        violating = {p.pod.uid for p in order.pdb_split(lower, outcome.pdbs)[0]}
    out = []
    for info in sorted(outcome.chosen_pods, key=lambda p: (p.pod.namespace, p.pod.name)):
        pod = info.pod
        if pod.uid in victims:
            verdict = "victim"
        elif pod.priority < preemptor.priority:
            verdict = "reprieved: the preemptor fits without evicting it"
        else:
            verdict = "not lower priority than the preemptor"
        entry: dict[str, Any] = {
            "pod": f"{pod.namespace}/{pod.name}",
            "priority": pod.priority,
            "verdict": verdict,
        }
        if pod.uid in violating:
            entry["violatesPDB"] = True
        out.append(entry)
    return out
