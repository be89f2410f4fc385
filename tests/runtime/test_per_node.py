"""``Framework.per_node`` (``--exact`` / ``--per-node``) reaches the plugins through
``Handle.per_node``: on a scenario with topology spread constraints, pod affinity
and anti-affinity (required and preferred) and a preemption, the whole default
profile runs without one call of PodTopologySpread's or InterPodAffinity's
vectorised builders, and the run's result equals the default path's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kubesched.sim.scenario import load_scenario, run_scenario
from tests.plugins.vectorised_spies import count_vectorised, forbid_vectorised

_HEAD = """\
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: low}
value: 10
"""

_NODE = """\
---
apiVersion: v1
kind: Node
metadata:
  name: %(name)s
  labels: {kubernetes.io/hostname: %(name)s, topology.kubernetes.io/zone: %(zone)s}
status:
  allocatable: {cpu: "2", memory: 4Gi, pods: "110"}
"""

_POD = """\
---
apiVersion: v1
kind: Pod
metadata: {name: %(name)s, labels: {app: %(app)s}}
spec:
  %(node)s
  priorityClassName: %(prio)s
  terminationGracePeriodSeconds: 0
  containers:
  - {name: c, image: nginx, resources: {requests: {cpu: %(cpu)s, memory: 128Mi}}}
  topologySpreadConstraints:
  - maxSkew: 1
    topologyKey: topology.kubernetes.io/zone
    whenUnsatisfiable: DoNotSchedule
    labelSelector: {matchLabels: {app: web}}
  - maxSkew: 1
    topologyKey: kubernetes.io/hostname
    whenUnsatisfiable: ScheduleAnyway
    labelSelector: {matchLabels: {app: web}}
  affinity:
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - topologyKey: kubernetes.io/hostname
        labelSelector: {matchLabels: {app: %(app)s-solo}}
      preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 50
        podAffinityTerm:
          topologyKey: kubernetes.io/hostname
          labelSelector: {matchLabels: {app: %(app)s}}
    podAffinity:
      preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 20
        podAffinityTerm:
          topologyKey: topology.kubernetes.io/zone
          labelSelector: {matchLabels: {app: db}}
"""


def _scenario(tmp_path: Path) -> Path:
    parts = [_HEAD]
    for i, zone in enumerate("aabb"):
        parts.append(_NODE % {"name": f"n{i}", "zone": zone})
    # Running pods: low-priority fillers (one of them app=web-solo, which the web
    # pods' required anti-affinity avoids) and a db pod.
    running = [("db", "db", "n0", "500m"), ("solo", "web-solo", "n1", "500m")]
    running += [(f"fill{i}", "fill", f"n{i}", "1") for i in range(4)]
    for name, app, node, cpu in running:
        parts.append(
            _POD
            % {"name": name, "app": app, "node": f"nodeName: {node}", "prio": "low", "cpu": cpu}
        )
    # Pending web pods, spread over zones; the last ones need preemption.
    for i in range(6):
        parts.append(
            _POD
            % {
                "name": f"web{i}",
                "app": "web",
                "node": "",
                "prio": "high" if i >= 3 else "low",
                "cpu": "600m",
            }
        )
    path = tmp_path / "scenario.yaml"
    path.write_text("".join(parts))
    return path


def _result(path: Path, per_node: bool) -> dict[str, Any]:
    result = run_scenario(load_scenario([str(path)]), per_node=per_node).result()
    out: dict[str, Any] = json.loads(json.dumps(result, default=str))
    return out


def test_per_node_profile_runs_no_vectorised_builder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _scenario(tmp_path)
    with pytest.MonkeyPatch.context() as mp:
        counted = count_vectorised(mp)
        default = _result(path, per_node=False)
    # The control: the default path does use both plugins' vectorised builders.
    assert any(c.startswith("PTS ") for c in counted)
    assert any(c.startswith("IPA ") for c in counted)
    calls = forbid_vectorised(monkeypatch)
    per_node = _result(path, per_node=True)
    assert calls == []
    assert per_node == default
    # The scenario exercised Filter rejections, binds and a preemption (dry run
    # through AddPod / RemovePod).
    assert default["preemptions"]
    phases = {p["name"]: p["phase"] for p in default["pods"]}
    assert "Pending" in phases.values() and phases["web0"] == "Running"
