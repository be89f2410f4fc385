"""Reading YAML/JSON input and converting it into typed objects (api/load.py, api/convert/).

Fixtures are written as YAML, as users write them; ``patched`` deep-merges a YAML
fragment into a valid object so each error case states only what is wrong.
"""

from __future__ import annotations

import copy
import io
import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubesched.api.convert import Workload
from kubesched.api.convert.values import parse_time
from kubesched.api.errors import InputError
from kubesched.api.load import (
    KINDS,
    Document,
    LoadResult,
    documents_from_text,
    load_objects,
    read_documents,
)
from kubesched.api.types import Namespace, Node, Pod, PodDisruptionBudget, PriorityClass
from tests.hypothesis_profiles import scaled

QUANTITY_RE_MSG = (
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
)
T0 = 1704164645 * 10**9  # 2024-01-02T03:04:05Z


def y(text: str) -> dict[str, Any]:
    """A YAML mapping (timestamps stay strings, as the loader reads them)."""
    (d,) = documents_from_text(textwrap.dedent(text), "fixture")
    return dict(d.raw)


def patched(base: dict[str, Any], fragment: str) -> dict[str, Any]:
    """``base`` with the YAML ``fragment`` deep-merged in (mappings merge, others replace)."""

    def merge(into: dict[str, Any], extra: dict[str, Any]) -> None:
        for k, v in extra.items():
            if isinstance(v, dict) and isinstance(into.get(k), dict):
                merge(into[k], v)
            else:
                into[k] = v

    out = copy.deepcopy(base)
    merge(out, yaml.safe_load(fragment))
    return out


POD = y("""
    apiVersion: v1
    kind: Pod
    metadata: {name: web-1}
    spec:
      containers: [{name: c, image: nginx}]
    """)


# Fixtures of kinds we act on are written without apiVersion (what they test is
# elsewhere); ``doc`` gives them the served one, as real input has it. Tests of a
# missing apiVersion build their Document themselves.
SERVED = {kind: f"{g}/{v[0]}" if g else v[0] for kind, (g, v) in KINDS.items()}


def served(raw: dict[str, Any]) -> dict[str, Any]:
    kind = raw.get("kind")
    if "apiVersion" in raw or not isinstance(kind, str) or kind not in SERVED:
        return raw
    return {"apiVersion": SERVED[kind], **raw}


def doc(raw: dict[str, Any], source: str = "in.yaml", index: int = 0) -> Document:
    return Document(source=source, index=index, raw=served(raw))


def load(*raws: dict[str, Any]) -> LoadResult:
    return load_objects([doc(r, index=i) for i, r in enumerate(raws)])


def load_one(raw: dict[str, Any]) -> Any:
    result = load(raw)
    assert len(result.objects) == 1
    return result.objects[0].obj


def load_pod(fragment: str) -> Pod:
    p = load_one(patched(POD, fragment))
    assert isinstance(p, Pod)
    return p


def load_error(raw: dict[str, Any]) -> InputError:
    with pytest.raises(InputError) as exc:
        load(raw)
    return exc.value


# --------------------------------------------------------------------------- reading


def test_multi_document_yaml_skips_empty_documents_and_numbers_objects(tmp_path: Path) -> None:
    f = tmp_path / "a.yaml"
    f.write_text(
        "---\n# only a comment\n---\nkind: Node\nmetadata: {name: n1}\n---\n---\n"
        "kind: Node\nmetadata: {name: n2}\n"
    )
    docs = read_documents([str(f)])
    assert [(d.source, d.index, d.raw["metadata"]["name"]) for d in docs] == [
        (str(f), 0, "n1"),
        (str(f), 1, "n2"),
    ]


def test_yaml_timestamps_stay_strings() -> None:
    raw = y("kind: Pod\nmetadata: {creationTimestamp: 2024-01-02T03:04:05Z}\n")
    assert raw["metadata"]["creationTimestamp"] == "2024-01-02T03:04:05Z"


@pytest.mark.parametrize(
    "text",
    [
        pytest.param('{"kind": "Node", "metadata": {"name": "n1"}}', id="a JSON object"),
        pytest.param(
            '{"kind": "Node", "metadata": {"name": "n1"}}\n'
            '{"kind": "Node", "metadata": {"name": "n2"}}',
            id="a stream of concatenated JSON objects",
        ),
        pytest.param("{kind: Node, metadata: {name: n1}}", id="a YAML flow mapping"),
    ],
)
def test_json_and_flow_yaml(text: str) -> None:
    docs = documents_from_text(text, "x.json")
    assert docs[0].raw == {"kind": "Node", "metadata": {"name": "n1"}}
    assert [d.index for d in docs] == list(range(len(docs)))


def test_yaml_anchors_aliases_and_merge_keys() -> None:
    node = load_one(
        y("""
        kind: Node
        metadata: {name: n1, labels: &labels {zone: a}, annotations: *labels}
        status:
          capacity:
            <<: {cpu: "2", pods: 10}
            memory: 1Gi
        """)
    )
    assert dict(node.labels) == dict(node.annotations) == {"zone": "a"}
    assert dict(node.allocatable) == {"cpu": 2000, "pods": 10, "memory": 2**30}


def test_yaml_scalars_resolve_as_yaml_1_1() -> None:
    raw = y("{a: yes, b: '1', c: 1, d: 1.5, e: null, f: ~, g: 0x10, h: 1e3, i: '2024-01-02'}")
    assert raw == {
        "a": True,
        "b": "1",
        "c": 1,
        "d": 1.5,
        "e": None,
        "f": None,
        "g": 16,
        "h": "1e3",
        "i": "2024-01-02",
    }


def test_lists_are_unpacked_in_order() -> None:
    text = """
apiVersion: v1
kind: List
items:
- {kind: Node, metadata: {name: n1}}
- kind: PodList
  items:
  - {kind: Pod, metadata: {name: p1}}
  - {kind: Pod, metadata: {name: p2}}
- kind: ServiceList
  items: null
- {kind: Node, metadata: {name: n2}}
---
{kind: Node, metadata: {name: n3}}
"""
    docs = documents_from_text(text, "dump.yaml")
    assert [(d.index, d.raw["metadata"]["name"]) for d in docs] == [
        (0, "n1"),
        (1, "p1"),
        (2, "p2"),
        (3, "n2"),
        (4, "n3"),
    ]


def test_directory_reads_yaml_yml_json_sorted_not_recursive(tmp_path: Path) -> None:
    (tmp_path / "b.yml").write_text("kind: Node\nmetadata: {name: b}\n")
    (tmp_path / "a.json").write_text('{"kind": "Node", "metadata": {"name": "a"}}')
    (tmp_path / "c.yaml").write_text("kind: Node\nmetadata: {name: c}\n")
    (tmp_path / "notes.txt").write_text("kind: Node\nmetadata: {name: txt}\n")
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "d.yaml").write_text("kind: Node\nmetadata: {name: d}\n")
    docs = read_documents([str(tmp_path)])
    assert [d.raw["metadata"]["name"] for d in docs] == ["a", "b", "c"]
    assert docs[0].source == str(tmp_path / "a.json")


def test_stdin_is_read_once_and_paths_keep_order(tmp_path: Path) -> None:
    f = tmp_path / "f.yaml"
    f.write_text("kind: Node\nmetadata: {name: file}\n")
    stdin = io.StringIO("kind: Node\nmetadata: {name: piped}\n")
    docs = read_documents(["-", str(f), "-"], stdin=stdin)
    assert [(d.source, d.raw["metadata"]["name"]) for d in docs] == [
        ("<stdin>", "piped"),
        (str(f), "file"),
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param(
            "kind: Pod\nmetadata:\n  name: a\n    bad: indent\n",
            # libyaml ends "in this context", the pure-Python parser "here"
            "malformed YAML: line 4, column 8: mapping values are not allowed",
            id="malformed YAML names line and column",
        ),
        pytest.param(
            '{"kind": "Pod",\n "metadata": {"name": "a"\n}',
            "malformed JSON: line 3, column 2: Expecting ',' delimiter",
            id="malformed JSON names line and column",
        ),
        pytest.param(
            "just a string\n",
            "expected a mapping at the top level, got string",
            id="a scalar document",
        ),
        pytest.param(
            "- a\n- b\n", "expected a mapping at the top level, got list", id="a list document"
        ),
        pytest.param(
            "kind: Node\nkind: Pod\n",
            "malformed YAML: line 2, column 1: mapping key 'kind' already defined",
            id="a repeated mapping key",
        ),
        pytest.param(
            "kind: List\nitems: 3\n", "expected a list, got integer", id="List items not a list"
        ),
    ],
)
def test_read_errors(tmp_path: Path, text: str, message: str) -> None:
    f = tmp_path / "bad.yaml"
    f.write_text(text)
    with pytest.raises(InputError) as exc:
        read_documents([str(f)])
    assert exc.value.source == str(f)
    assert exc.value.message.startswith(message)
    assert "\n" not in str(exc.value)


def test_missing_file() -> None:
    with pytest.raises(InputError) as exc:
        read_documents(["/no/such/file.yaml"])
    assert str(exc.value) == "/no/such/file.yaml: no such file or directory"


def test_non_utf8_file(tmp_path: Path) -> None:
    f = tmp_path / "bin.yaml"
    f.write_bytes(b"kind: \xff\xfe\n")
    with pytest.raises(InputError, match="not UTF-8"):
        read_documents([str(f)])


# --------------------------------------------------------------------------- pods


def test_pod_metadata_and_status() -> None:
    result = load(
        patched(
            POD,
            """
            metadata:
              namespace: team-a
              uid: u-1
              labels: {app: web}
              annotations: {kubesched.io/run-for: 90s}
              creationTimestamp: 2024-01-02T03:04:05Z
              deletionTimestamp: 2024-01-02T03:05:00.250Z
              ownerReferences:
              - {apiVersion: apps/v1, kind: ReplicaSet, name: web-abc, uid: rs-1, controller: true}
            spec: {nodeName: n1}
            status:
              phase: Running
              startTime: 2024-01-02T03:04:06Z
              nominatedNodeName: n2
              conditions:
              - {type: PodScheduled, status: "True", lastTransitionTime: 2024-01-02T03:04:06Z}
              - {type: DisruptionTarget, status: "True", reason: PreemptionByScheduler}
            """,
        )
    )
    loaded = result.objects[0]
    p = loaded.obj
    assert isinstance(p, Pod)
    assert (p.namespace, p.name, p.uid, p.key) == ("team-a", "web-1", "u-1", "team-a/web-1")
    assert dict(p.labels) == {"app": "web"}
    assert dict(loaded.annotations) == {"kubesched.io/run-for": "90s"}
    assert p.creation_timestamp == T0
    assert p.deletion_timestamp == T0 + 55 * 10**9 + 250_000_000
    ref = p.controller_ref()
    assert ref is not None
    assert (ref.api_version, ref.kind, ref.name, ref.uid) == (
        "apps/v1",
        "ReplicaSet",
        "web-abc",
        "rs-1",
    )
    assert (p.node_name, p.nominated_node_name, p.phase) == ("n1", "n2", "Running")
    assert p.start_time == T0 + 10**9
    assert [(c.type, c.reason) for c in p.conditions] == [
        ("PodScheduled", ""),
        ("DisruptionTarget", "PreemptionByScheduler"),
    ]
    assert p.conditions[0].last_transition_time == T0 + 10**9


def test_pod_defaults() -> None:
    p = load_one(POD)
    assert isinstance(p, Pod)
    assert (p.namespace, p.uid, p.phase, p.node_name) == ("default", "default/web-1", "Pending", "")
    assert p.spec.scheduler_name == "default-scheduler"
    assert p.spec.termination_grace_period_seconds is None
    assert p.termination_grace_period_seconds == 30
    assert (p.priority, p.priority_class_name, p.preemption_policy) == (
        0,
        "",
        "PreemptLowerPriority",
    )
    assert (p.start_time, p.deletion_timestamp, p.creation_timestamp) == (None, None, 0)
    loaded = load(POD).objects[0]
    assert (loaded.spec_priority, loaded.spec_preemption_policy) == (None, None)


def test_pod_containers_requests_limits_ports_and_sidecars() -> None:
    p = load_pod("""
        spec:
          containers:
          - name: app
            image: nginx:1.25
            resources:
              requests: {cpu: 250m, memory: 64Mi}
              limits: {cpu: 1, memory: 128Mi, nvidia.com/gpu: 2}
            ports:
            - {containerPort: 80, hostPort: 8080, protocol: UDP, hostIP: 10.0.0.1}
            - {containerPort: 443}
          initContainers:
          - {name: setup, resources: {requests: {cpu: "2"}}}
          - {name: proxy, restartPolicy: Always, resources: {limits: {cpu: 0.5}}}
          - {name: zero, resources: {requests: {cpu: null}}}
          overhead: {cpu: 100m}
        """)
    app = p.spec.containers[0]
    assert (app.name, app.image) == ("app", "nginx:1.25")
    # requests default to limits per resource (SetDefaults_Pod); written requests win
    assert dict(app.requests) == {"cpu": 250, "memory": 64 * 2**20, "nvidia.com/gpu": 2}
    assert [(q.container_port, q.host_port, q.protocol, q.host_ip) for q in app.ports] == [
        (80, 8080, "UDP", "10.0.0.1"),
        (443, 0, "TCP", ""),
    ]
    setup, proxy, zero = p.spec.init_containers
    assert (setup.restart_policy, dict(setup.requests)) == (None, {"cpu": 2000})
    assert (proxy.restart_policy, dict(proxy.requests)) == ("Always", {"cpu": 500})
    assert dict(zero.requests) == {"cpu": 0}, "a null quantity is zero (Quantity.UnmarshalJSON)"
    assert dict(p.spec.overhead) == {"cpu": 100}


def test_host_network_defaults_host_ports() -> None:
    p = load_pod("""
        spec:
          hostNetwork: true
          containers:
          - name: c
            ports: [{containerPort: 53, protocol: UDP}, {containerPort: 80, hostPort: 81}]
          initContainers: [{name: i, ports: [{containerPort: 9000}]}]
        """)
    assert p.spec.host_network is True
    ports = [(q.container_port, q.host_port) for q in p.spec.containers[0].ports]
    assert ports == [(53, 53), (80, 81)]
    assert p.spec.init_containers[0].ports[0].host_port == 9000


@pytest.mark.parametrize(
    ("resources", "expected"),
    [
        pytest.param("{requests: {cpu: 1}}", {"cpu": 1000}, id="pod-level requests as written"),
        pytest.param(
            "{limits: {cpu: 4, memory: 1Gi}}",
            {"cpu": 300, "memory": 2**30},
            id="with pod-level limits cpu defaults to the containers' sum, memory to its limit",
        ),
        pytest.param(
            "{requests: {cpu: 2}, limits: {cpu: 4, hugepages-2Mi: 2Mi}}",
            {"cpu": 2000, "hugepages-2Mi": 2 * 2**20},
            id="written pod-level requests win; hugepages default to their limit",
        ),
    ],
)
def test_pod_level_resources(resources: str, expected: dict[str, int]) -> None:
    p = load_pod(f"""
        spec:
          resources: {resources}
          containers:
          - {{name: a, resources: {{requests: {{cpu: 100m}}}}}}
          - {{name: b, resources: {{requests: {{cpu: 200m}}}}}}
        """)
    assert dict(p.spec.resources) == expected


def test_pod_scheduling_fields() -> None:
    fragment = """
        spec:
          schedulerName: my-scheduler
          priority: 1000
          priorityClassName: gold
          preemptionPolicy: Never
          terminationGracePeriodSeconds: 5
          nodeSelector: {disk: ssd}
          schedulingGates: [{name: g1}, {name: g2}]
          tolerations:
          - {key: k, operator: Equal, value: v, effect: NoSchedule}
          - {key: k2, operator: Exists, effect: NoExecute, tolerationSeconds: 60}
          - {operator: Exists}
          - {key: k3, value: v3}
          topologySpreadConstraints:
          - maxSkew: 1
            topologyKey: zone
            whenUnsatisfiable: DoNotSchedule
            labelSelector: {matchLabels: {app: web}}
            minDomains: 3
            nodeAffinityPolicy: Honor
            nodeTaintsPolicy: Ignore
            matchLabelKeys: [pod-template-hash]
          - {maxSkew: 2, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway}
        """
    loaded = load(patched(POD, fragment)).objects[0]
    assert (loaded.spec_priority, loaded.spec_preemption_policy) == (1000, "Never")
    p = loaded.obj
    assert isinstance(p, Pod)
    s = p.spec
    assert s.scheduler_name == "my-scheduler"
    assert (p.priority, p.priority_class_name, p.preemption_policy) == (1000, "gold", "Never")
    assert s.termination_grace_period_seconds == 5
    assert dict(s.node_selector) == {"disk": "ssd"}
    assert s.scheduling_gates == ("g1", "g2")
    tolerations = [
        (t.key, t.operator, t.value, t.effect, t.toleration_seconds) for t in s.tolerations
    ]
    assert tolerations == [
        ("k", "Equal", "v", "NoSchedule", None),
        ("k2", "Exists", "", "NoExecute", 60),
        ("", "Exists", "", "", None),
        ("k3", "Equal", "v3", "", None),
    ]
    c0, c1 = s.topology_spread_constraints
    assert (c0.max_skew, c0.topology_key, c0.when_unsatisfiable, c0.min_domains) == (
        1,
        "zone",
        "DoNotSchedule",
        3,
    )
    assert c0.label_selector is not None and dict(c0.label_selector.match_labels) == {"app": "web"}
    assert (c0.node_affinity_policy, c0.node_taints_policy) == ("Honor", "Ignore")
    assert c0.match_label_keys == ("pod-template-hash",)
    assert (c1.max_skew, c1.label_selector, c1.min_domains) == (2, None, None)
    assert (c1.node_affinity_policy, c1.node_taints_policy) == (None, None)


def test_pod_affinity() -> None:
    p = load_pod("""
        spec:
          affinity:
            nodeAffinity:
              requiredDuringSchedulingIgnoredDuringExecution:
                nodeSelectorTerms:
                - matchExpressions: [{key: cores, operator: Gt, values: ["4"]}]
                  matchFields: [{key: metadata.name, operator: In, values: [n1]}]
                - matchExpressions: [{key: gpu, operator: Exists}]
              preferredDuringSchedulingIgnoredDuringExecution:
              - weight: 10
                preference: {matchExpressions: [{key: ssd, operator: DoesNotExist}]}
            podAffinity:
              requiredDuringSchedulingIgnoredDuringExecution:
              - labelSelector:
                  matchLabels: {app: db}
                  matchExpressions: [{key: tier, operator: In, values: [a, b]}]
                namespaces: [ns1]
                namespaceSelector: {}
                topologyKey: zone
                matchLabelKeys: [v]
                mismatchLabelKeys: [tenant]
            podAntiAffinity:
              preferredDuringSchedulingIgnoredDuringExecution:
              - weight: 100
                podAffinityTerm: {topologyKey: kubernetes.io/hostname}
        """)
    aff = p.spec.affinity
    assert aff is not None and aff.node_affinity is not None
    assert aff.node_affinity.required is not None
    t0, t1 = aff.node_affinity.required.terms
    assert [(r.key, r.operator, r.values) for r in t0.match_expressions] == [
        ("cores", "Gt", ("4",))
    ]
    assert [(r.key, r.operator, r.values) for r in t0.match_fields] == [
        ("metadata.name", "In", ("n1",))
    ]
    assert [(r.key, r.operator, r.values) for r in t1.match_expressions] == [("gpu", "Exists", ())]
    (pref,) = aff.node_affinity.preferred
    assert pref.weight == 10 and pref.preference.match_expressions[0].operator == "DoesNotExist"
    assert aff.pod_affinity is not None
    (req,) = aff.pod_affinity.required
    assert req.label_selector is not None
    assert dict(req.label_selector.match_labels) == {"app": "db"}
    exprs = [(r.key, r.operator, r.values) for r in req.label_selector.match_expressions]
    assert exprs == [("tier", "In", ("a", "b"))]
    assert (req.namespaces, req.topology_key) == (("ns1",), "zone")
    assert (req.match_label_keys, req.mismatch_label_keys) == (("v",), ("tenant",))
    assert req.namespace_selector is not None and req.namespace_selector.is_empty()
    assert aff.pod_anti_affinity is not None
    (w,) = aff.pod_anti_affinity.preferred
    assert (w.weight, w.term.topology_key) == (100, "kubernetes.io/hostname")
    assert (w.term.label_selector, w.term.namespace_selector) == (None, None)


# --------------------------------------------------------------------------- other kinds


def test_node() -> None:
    node = load_one(
        y("""
        apiVersion: v1
        kind: Node
        metadata: {name: n1, uid: nu, labels: {zone: a}, annotations: {x: y}}
        spec:
          unschedulable: true
          taints:
          - {key: dedicated, value: gpu, effect: NoSchedule}
          - {key: k, effect: NoExecute}
        status:
          capacity: {cpu: "8", memory: 32Gi, pods: "110"}
          allocatable: {cpu: 7500m, memory: 30Gi, pods: 110, example.com/foo: "3"}
          conditions: [{type: Ready, status: "True", reason: KubeletReady}]
          images: [{names: ["nginx:1.25", "nginx@sha256:x"], sizeBytes: 1000}]
        """)
    )
    assert isinstance(node, Node)
    assert (node.name, node.uid) == ("n1", "nu")
    assert (dict(node.labels), dict(node.annotations)) == ({"zone": "a"}, {"x": "y"})
    assert node.unschedulable is True
    assert [(t.key, t.value, t.effect) for t in node.taints] == [
        ("dedicated", "gpu", "NoSchedule"),
        ("k", "", "NoExecute"),
    ]
    assert dict(node.allocatable) == {
        "cpu": 7500,
        "memory": 30 * 2**30,
        "pods": 110,
        "example.com/foo": 3,
    }
    assert [(c.type, c.status, c.reason) for c in node.conditions] == [
        ("Ready", "True", "KubeletReady")
    ]
    assert [(i.names, i.size_bytes) for i in node.images] == [
        (("nginx:1.25", "nginx@sha256:x"), 1000)
    ]


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        pytest.param(
            "{capacity: {cpu: 4, pods: 10}}",
            {"cpu": 4000, "pods": 10},
            id="no allocatable: capacity",
        ),
        pytest.param(
            "{capacity: {cpu: 4, pods: 10}, allocatable: {cpu: 3}}",
            {"cpu": 3000},
            id="SetDefaults_NodeStatus falls back as a whole, not per resource",
        ),
        pytest.param("{}", {}, id="neither: nothing allocatable"),
    ],
)
def test_node_allocatable_fallback(status: str, expected: dict[str, int]) -> None:
    node = load_one(y(f"{{kind: Node, metadata: {{name: n1}}, status: {status}}}"))
    assert dict(node.allocatable) == expected


def test_priority_class() -> None:
    pc = load_one(
        y("""
        apiVersion: scheduling.k8s.io/v1
        kind: PriorityClass
        metadata: {name: gold}
        value: 1000
        globalDefault: true
        description: d
        preemptionPolicy: Never
        """)
    )
    assert pc == PriorityClass(
        "gold", 1000, global_default=True, preemption_policy="Never", description="d"
    )
    plain = load_one(y("{kind: PriorityClass, metadata: {name: p}, value: -5}"))
    assert plain == PriorityClass("p", -5)


def test_priority_class_validation_error_has_context() -> None:
    err = load_error(y("{kind: PriorityClass, metadata: {name: gold}, value: 2000000000}"))
    assert str(err) == (
        "in.yaml: priorityclass gold: value: Forbidden: maximum allowed value of a user defined "
        "priority is 1000000000"
    )


def test_pdb() -> None:
    pdb = load_one(
        y("""
        apiVersion: policy/v1
        kind: PodDisruptionBudget
        metadata: {name: db, namespace: prod}
        spec:
          minAvailable: 50%
          selector: {matchLabels: {app: db}}
          unhealthyPodEvictionPolicy: AlwaysAllow
        status:
          disruptionsAllowed: 1
          currentHealthy: 3
          desiredHealthy: 2
          expectedPods: 3
          observedGeneration: 4
          disruptedPods: {db-0: 2024-01-02T03:04:05Z}
        """)
    )
    assert isinstance(pdb, PodDisruptionBudget)
    assert (pdb.key, pdb.min_available, pdb.max_unavailable) == ("prod/db", "50%", None)
    assert pdb.selector is not None and dict(pdb.selector.match_labels) == {"app": "db"}
    assert pdb.unhealthy_pod_eviction_policy == "AlwaysAllow"
    s = pdb.status
    assert (s.disruptions_allowed, s.current_healthy, s.desired_healthy) == (1, 3, 2)
    assert (s.expected_pods, s.observed_generation) == (3, 4)
    assert s.disrupted_pods == {"db-0": T0}


@pytest.mark.parametrize(
    ("spec", "selects_all", "max_unavailable"),
    [
        pytest.param("{maxUnavailable: 1}", None, 1, id="no selector selects nothing (None)"),
        pytest.param(
            "{maxUnavailable: 100%, selector: {}}", True, "100%", id="an empty selector selects all"
        ),
    ],
)
def test_pdb_selectors(spec: str, selects_all: bool | None, max_unavailable: int | str) -> None:
    pdb = load_one(y(f"{{kind: PodDisruptionBudget, metadata: {{name: b}}, spec: {spec}}}"))
    assert pdb.max_unavailable == max_unavailable
    if selects_all is None:
        assert pdb.selector is None
    else:
        assert pdb.selector is not None and pdb.selector.is_empty()


def test_namespace_gets_metadata_name_label() -> None:
    ns = load_one(y("{kind: Namespace, metadata: {name: team-a, labels: {env: prod}}}"))
    assert isinstance(ns, Namespace)
    assert dict(ns.labels) == {"env": "prod", "kubernetes.io/metadata.name": "team-a"}


WORKLOAD = y("""
    apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: web
      namespace: prod
      annotations: {kubesched.io/create-at: 5s}
    spec:
      replicas: 3
      selector: {matchLabels: {app: web}}
      template:
        metadata:
          labels: {app: web, tier: fe}
          annotations: {kubesched.io/run-for: 1m}
        spec:
          priorityClassName: gold
          priority: 10
          preemptionPolicy: Never
          containers: [{name: c, resources: {requests: {cpu: "1"}}}]
    """)


@pytest.mark.parametrize("kind", ["Deployment", "ReplicaSet"])
def test_workload(kind: str) -> None:
    loaded = load(patched(WORKLOAD, f"kind: {kind}")).objects[0]
    w = loaded.obj
    assert isinstance(w, Workload)
    assert (w.kind, w.key, w.replicas) == (kind, "prod/web", 3)
    assert dict(loaded.annotations) == {"kubesched.io/create-at": "5s"}
    assert w.selector is not None and dict(w.selector.match_labels) == {"app": "web"}
    assert dict(w.template_labels) == {"app": "web", "tier": "fe"}
    assert dict(w.template_annotations) == {"kubesched.io/run-for": "1m"}
    assert dict(w.template_spec.containers[0].requests) == {"cpu": 1000}
    template_priority = (
        w.template_priority,
        w.template_priority_class_name,
        w.template_preemption_policy,
    )
    assert template_priority == (10, "gold", "Never")


def test_workload_replicas_default_to_one() -> None:
    raw = copy.deepcopy(WORKLOAD)
    del raw["spec"]["replicas"]
    w = load_one(raw)
    assert isinstance(w, Workload) and w.replicas == 1


def test_scheduler_configuration_is_kept_raw() -> None:
    raw = y("""
        apiVersion: kubescheduler.config.k8s.io/v1
        kind: KubeSchedulerConfiguration
        profiles: [{schedulerName: default-scheduler}]
        """)
    loaded = load(raw).objects[0]
    assert (loaded.kind, loaded.obj) == ("KubeSchedulerConfiguration", raw)


def test_ignored_kinds_are_counted() -> None:
    result = load(
        y("{apiVersion: v1, kind: Service, metadata: {name: a}}"),
        y("{apiVersion: v1, kind: ConfigMap, metadata: {name: a}}"),
        y("{apiVersion: v1, kind: Service, metadata: {name: b}}"),
        y("{apiVersion: example.com/v1, kind: Node, metadata: {name: custom}}"),
        y("{apiVersion: v1, kind: Node, metadata: {name: n1}}"),
    )
    assert [o.kind for o in result.objects] == ["Node"]
    assert result.ignored == {"Service": 2, "ConfigMap": 1, "Node.example.com": 1}
    assert not load().ignored


def test_objects_come_back_in_input_order_with_source_and_index() -> None:
    result = load_objects(
        [
            doc(y("{kind: Node, metadata: {name: n1}}"), "a.yaml", 0),
            doc(POD, "a.yaml", 1),
            doc(y("{kind: Namespace, metadata: {name: x}}"), "b.yaml", 0),
        ]
    )
    assert [(o.kind, o.source, o.index) for o in result.objects] == [
        ("Node", "a.yaml", 0),
        ("Pod", "a.yaml", 1),
        ("Namespace", "b.yaml", 0),
    ]
    assert [o.obj.name for o in result.of_type(Pod)] == ["web-1"]
    assert len(result.of_kind("Node")) == 1


def test_json_file_loads_like_yaml(tmp_path: Path) -> None:
    f = tmp_path / "pod.json"
    f.write_text(json.dumps(patched(POD, "spec: {priority: 5}")))
    (p,) = load_objects(read_documents([str(f)])).objects
    assert p.spec_priority == 5 and isinstance(p.obj, Pod)


# --------------------------------------------------------------------------- timestamps


@pytest.mark.parametrize(
    ("text", "nanos"),
    [
        pytest.param("1970-01-01T00:00:00Z", 0, id="the epoch"),
        pytest.param("2024-01-02T03:04:05Z", T0, id="whole seconds"),
        pytest.param("2024-01-02T03:04:05.123456789Z", T0 + 123456789, id="nanoseconds"),
        pytest.param("2024-01-02T03:04:05.5Z", T0 + 500_000_000, id="a short fraction"),
        pytest.param("2024-01-02T05:04:05+02:00", T0, id="a positive offset"),
        pytest.param("2024-01-01T22:04:05-05:00", T0, id="a negative offset"),
    ],
)
def test_parse_time(text: str, nanos: int) -> None:
    assert parse_time(text, "f") == nanos


@pytest.mark.parametrize(
    "value",
    [
        "2024-01-02",
        "2024-13-02T03:04:05Z",
        "2024-01-02T03:04:05",
        "yesterday",
        "2024-01-02 03:04:05Z",
    ],
)
def test_parse_time_rejects(value: str) -> None:
    with pytest.raises(InputError) as exc:
        parse_time(value, "status.startTime")
    assert exc.value.field == "status.startTime"
    assert "expected an RFC 3339 time" in exc.value.message


# --------------------------------------------------------------------------- errors

NA_REQ = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
NA_TERM0 = NA_REQ + ".nodeSelectorTerms[0]"


def node_required(term: str) -> str:
    """A pod fragment with one required node selector term (YAML flow)."""
    return (
        "spec: {affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
        f"{{nodeSelectorTerms: [{term}]}}}}}}}}"
    )


def anti_required(term: str) -> str:
    return (
        "spec: {affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
        f"[{term}]}}}}}}"
    )


def spread(extra: str) -> str:
    base = "maxSkew: 1, topologyKey: z, whenUnsatisfiable: DoNotSchedule"
    return f"spec: {{topologySpreadConstraints: [{{{base}, {extra}}}]}}"


POD_ERRORS = [
    # wrong types
    (
        "spec: {priority: ten}",
        "spec.priority",
        'expected an integer, got "ten"',
        "an int given a string",
    ),
    ("spec: {priority: 1.5}", "spec.priority", "expected an integer, got 1.5", "an int given 1.5"),
    (
        "spec: {priority: 3000000000}",
        "spec.priority",
        "expected a 32-bit integer, got 3000000000",
        "an int32 overflow",
    ),
    (
        "spec: {containers: c}",
        "spec.containers",
        "expected a list, got string",
        "a list given a string",
    ),
    (
        "spec: {nodeSelector: [a]}",
        "spec.nodeSelector",
        "expected a mapping, got list",
        "a map given a list",
    ),
    (
        "spec: {hostNetwork: 'yes please'}",
        "spec.hostNetwork",
        'expected a boolean, got "yes please"',
        "a boolean given a string",
    ),
    (
        "metadata: {labels: {app: 1}}",
        "metadata.labels[app]",
        "expected a string, got 1",
        "a label value given a number",
    ),
    (
        "spec: {containers: [{image: x}]}",
        "spec.containers[0].name",
        "Required value",
        "a nameless container",
    ),
    ("spec: {containers: []}", "spec.containers", "Required value", "a pod without containers"),
    (
        "metadata: {name: Web_1}",
        "metadata.name",
        'Invalid value: "Web_1": a lowercase RFC 1123 subdomain',
        "an invalid object name",
    ),
    (
        "metadata: {namespace: a.b}",
        "metadata.namespace",
        'Invalid value: "a.b": a lowercase RFC 1123 label',
        "an invalid namespace",
    ),
    (
        "metadata: {creationTimestamp: now}",
        "metadata.creationTimestamp",
        '"now": expected an RFC 3339 time',
        "a bad timestamp",
    ),
    # quantities
    (
        "spec: {containers: [{name: c, resources: {requests: {cpu: abc}}}]}",
        "spec.containers[0].resources.requests.cpu",
        f'"abc": {QUANTITY_RE_MSG}',
        "a bad request quantity",
    ),
    (
        "spec: {containers: [{name: c, resources: {limits: {memory: 1Mk}}}]}",
        "spec.containers[0].resources.limits.memory",
        '"1Mk": unable to parse quantity\'s suffix',
        "a bad limit suffix",
    ),
    (
        "spec: {overhead: {cpu: true}}",
        "spec.overhead.cpu",
        "expected a quantity, got true",
        "a boolean quantity",
    ),
    (
        "spec: {containers: [{name: c, resources: {requests: {cpu: '-1'}}}]}",
        "spec.containers[0].resources.requests.cpu",
        'Invalid value: "-1": must be greater than or equal to 0',
        "a negative quantity",
    ),
    # enums and API validation
    (
        "spec: {preemptionPolicy: Always}",
        "spec.preemptionPolicy",
        'Unsupported value: "Always": supported values: "PreemptLowerPriority", "Never"',
        "a bad preemptionPolicy",
    ),
    (
        "spec: {preemptionPolicy: ''}",
        "spec.preemptionPolicy",
        "Required value",
        "an empty preemptionPolicy",
    ),
    (
        "spec: {tolerations: [{key: k, operator: Lt, value: '3'}]}",
        "spec.tolerations[0].operator",
        'Unsupported value: "Lt": supported values: "Equal", "Exists"',
        "a toleration operator behind an alpha gate",
    ),
    (
        "spec: {tolerations: [{operator: Equal, value: v}]}",
        "spec.tolerations[0].operator",
        'Invalid value: "Equal": operator must be Exists when `key` is empty, which means '
        '"match all values and all keys"',
        "an empty toleration key needs Exists",
    ),
    (
        "spec: {tolerations: [{key: k, operator: Exists, value: v}]}",
        "spec.tolerations[0].operator",
        "Invalid value: \"Exists\": value must be empty when `operator` is 'Exists'",
        "Exists with a value",
    ),
    (
        "spec: {tolerations: [{key: k, effect: NoSchedule, tolerationSeconds: 5}]}",
        "spec.tolerations[0].effect",
        "Invalid value: \"NoSchedule\": effect must be 'NoExecute' when `tolerationSeconds` is set",
        "tolerationSeconds needs NoExecute",
    ),
    (
        "spec: {tolerations: [{key: k, effect: Evict}]}",
        "spec.tolerations[0].effect",
        'Unsupported value: "Evict": supported values: "NoSchedule", "PreferNoSchedule", '
        '"NoExecute"',
        "a bad toleration effect",
    ),
    (
        "spec: {topologySpreadConstraints: [{maxSkew: 1, topologyKey: z, whenUnsatisfiable: M}]}",
        "spec.topologySpreadConstraints[0].whenUnsatisfiable",
        'Unsupported value: "M": supported values: "DoNotSchedule", "ScheduleAnyway"',
        "a bad whenUnsatisfiable",
    ),
    (
        spread("maxSkew: 0"),
        "spec.topologySpreadConstraints[0].maxSkew",
        "Invalid value: 0: must be greater than zero",
        "maxSkew zero",
    ),
    (
        spread("topologyKey: ''"),
        "spec.topologySpreadConstraints[0].topologyKey",
        "Required value: can not be empty",
        "a spread constraint without topologyKey",
    ),
    (
        spread("whenUnsatisfiable: ScheduleAnyway, minDomains: 2"),
        "spec.topologySpreadConstraints[0].minDomains",
        "Invalid value: 2: can only use minDomains if whenUnsatisfiable=DoNotSchedule, "
        "not ScheduleAnyway",
        "minDomains with ScheduleAnyway",
    ),
    (
        spread("nodeTaintsPolicy: Sometimes"),
        "spec.topologySpreadConstraints[0].nodeTaintsPolicy",
        'Unsupported value: "Sometimes": supported values: "Honor", "Ignore"',
        "a bad node inclusion policy",
    ),
    (
        spread("matchLabelKeys: [a]"),
        "spec.topologySpreadConstraints[0].matchLabelKeys",
        "Forbidden: must not be specified when labelSelector is not set",
        "matchLabelKeys without labelSelector",
    ),
    (
        "spec: {topologySpreadConstraints: [{maxSkew: 1, topologyKey: z, whenUnsatisfiable: "
        "DoNotSchedule}, {maxSkew: 2, topologyKey: z, whenUnsatisfiable: DoNotSchedule}]}",
        "spec.topologySpreadConstraints[0].{topologyKey, whenUnsatisfiable}",
        'Duplicate value: "{z, DoNotSchedule}"',
        "a repeated spread constraint",
    ),
    (
        node_required("{matchExpressions: [{key: k, operator: Like, values: [a]}]}"),
        NA_TERM0 + ".matchExpressions[0].operator",
        'Invalid value: "Like": not a valid selector operator',
        "a bad node selector operator",
    ),
    (
        node_required("{matchExpressions: [{key: k, operator: In}]}"),
        NA_TERM0 + ".matchExpressions[0].values",
        "Required value: must be specified when `operator` is 'In' or 'NotIn'",
        "In without values",
    ),
    (
        node_required("{matchExpressions: [{key: k, operator: Gt, values: ['1', '2']}]}"),
        NA_TERM0 + ".matchExpressions[0].values",
        "Required value: must be specified single value when `operator` is 'Lt' or 'Gt'",
        "Gt with two values",
    ),
    (
        node_required("{matchFields: [{key: metadata.labels, operator: In, values: [x]}]}"),
        NA_TERM0 + ".matchFields[0].key",
        'Invalid value: "metadata.labels": not a valid field selector key',
        "a bad field selector key",
    ),
    (
        "spec: {affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {}}}}",
        NA_REQ + ".nodeSelectorTerms",
        "Required value: must have at least one node selector term",
        "required node affinity without terms",
    ),
    (
        "spec: {affinity: {nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: "
        "[{weight: 0, preference: {}}]}}}",
        "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight",
        "Invalid value: 0: must be in the range 1-100",
        "a preferred term of weight 0",
    ),
    (
        anti_required("{labelSelector: {}}"),
        "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"
        ".topologyKey",
        "Required value: can not be empty",
        "a pod affinity term without topologyKey",
    ),
    (
        anti_required(
            "{topologyKey: z, labelSelector: {matchExpressions: [{key: a, operator: Gt}]}}"
        ),
        "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"
        ".labelSelector.matchExpressions[0].operator",
        'Unsupported value: "Gt": supported values: "In", "NotIn", "Exists", "DoesNotExist"',
        "a bad label selector operator",
    ),
    (
        anti_required(
            "{topologyKey: z, labelSelector: {matchExpressions: [{key: a, operator: Exists, "
            "values: ['1']}]}}"
        ),
        "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"
        ".labelSelector.matchExpressions[0].values",
        "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
        "Exists with values in a label selector",
    ),
    (
        "spec: {containers: [{name: c, ports: [{containerPort: 70000}]}]}",
        "spec.containers[0].ports[0].containerPort",
        "Invalid value: 70000: must be between 1 and 65535, inclusive",
        "a port out of range",
    ),
    (
        "spec: {containers: [{name: c, ports: [{containerPort: 80, protocol: HTTP}]}]}",
        "spec.containers[0].ports[0].protocol",
        'Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"',
        "a bad port protocol",
    ),
    (
        "spec: {initContainers: [{name: i, restartPolicy: Sometimes}]}",
        "spec.initContainers[0].restartPolicy",
        'Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"',
        "a bad init container restartPolicy",
    ),
    (
        "spec: {initContainers: [{name: c}]}",
        "spec.initContainers[0].name",
        'Duplicate value: "c"',
        "an init container named like a container",
    ),
    (
        "spec: {schedulingGates: [{name: g}, {name: g}]}",
        "spec.schedulingGates[1].name",
        'Duplicate value: "g"',
        "a repeated scheduling gate",
    ),
    (
        "spec: {terminationGracePeriodSeconds: -1}",
        "spec.terminationGracePeriodSeconds",
        "Invalid value: -1: must be greater than or equal to 0",
        "a negative grace period",
    ),
    ("status: {phase: Done}", "status.phase", 'Unsupported value: "Done"', "a bad phase"),
    (
        "spec: {nodeName: n1, schedulingGates: [{name: g}]}",
        "spec.nodeName",
        "Forbidden: cannot be set until all schedulingGates have been cleared",
        "a bound pod with scheduling gates",
    ),
]


@pytest.mark.parametrize(
    ("fragment", "field", "message"), [pytest.param(*c[:3], id=c[3]) for c in POD_ERRORS]
)
def test_pod_errors_name_source_object_field_and_value(
    fragment: str, field: str, message: str
) -> None:
    raw = patched(POD, fragment)
    err = load_error(raw)
    assert (err.source, err.field) == ("in.yaml", field)
    assert err.message.startswith(message), err.message
    meta = raw["metadata"]
    assert err.obj == f"pod {meta.get('namespace', 'default')}/{meta['name']}"
    assert str(err) == f"in.yaml: {err.obj}: {field}: {err.message}"
    assert "\n" not in str(err)


RS = "{kind: ReplicaSet, metadata: {name: r}, spec: {selector: {matchLabels: {a: b}}, %s}}"
RS_TEMPLATE = "template: {metadata: {labels: {a: b}}, spec: {containers: [{name: c, %s}]}}"
PDB = "{kind: PodDisruptionBudget, metadata: {name: b}, %s}"

OTHER_ERRORS = [
    (
        "{kind: Node, metadata: {name: n1}, spec: {taints: [{key: k, effect: Evict}]}}",
        "node n1",
        "spec.taints[0].effect",
        'Unsupported value: "Evict": supported values: "NoSchedule", "PreferNoSchedule", '
        '"NoExecute"',
        "a bad taint effect",
    ),
    (
        "{kind: Node, metadata: {name: n1}, spec: {taints: [{key: k}]}}",
        "node n1",
        "spec.taints[0].effect",
        "Required value",
        "a taint without effect",
    ),
    (
        "{kind: Node, metadata: {name: n1}, spec: {taints: [{key: k, effect: NoSchedule}, "
        "{key: k, value: '2', effect: NoSchedule}]}}",
        "node n1",
        "spec.taints[1]",
        'Duplicate value: "k:NoSchedule": taints must be unique by key and effect pair',
        "a repeated taint key and effect",
    ),
    (
        "{kind: Node, metadata: {name: n1}, status: {capacity: {cpu: four}}}",
        "node n1",
        "status.capacity.cpu",
        f'"four": {QUANTITY_RE_MSG}',
        "a bad node capacity",
    ),
    ("{kind: Node, metadata: {}}", "node #0", "metadata.name", "Required value", "a nameless node"),
    (
        PDB % "spec: {minAvailable: 1, maxUnavailable: 1}",
        "poddisruptionbudget default/b",
        "spec",
        "minAvailable and maxUnavailable cannot be both set",
        "a PDB with both bounds",
    ),
    (
        PDB % "spec: {minAvailable: '5'}",
        "poddisruptionbudget default/b",
        "spec.minAvailable",
        'Invalid value: "5": a valid percent string must be a numeric string followed by an '
        "ending '%'",
        "a PDB minAvailable string without percent",
    ),
    (
        PDB % "spec: {maxUnavailable: 150%}",
        "poddisruptionbudget default/b",
        "spec.maxUnavailable",
        'Invalid value: "150%": must not be greater than 100%',
        "a PDB above 100%",
    ),
    (
        PDB % "spec: {maxUnavailable: -1}",
        "poddisruptionbudget default/b",
        "spec.maxUnavailable",
        "Invalid value: -1: must be greater than or equal to 0",
        "a negative PDB bound",
    ),
    (
        PDB % "spec: {unhealthyPodEvictionPolicy: Never}",
        "poddisruptionbudget default/b",
        "spec.unhealthyPodEvictionPolicy",
        'Unsupported value: "Never": supported values: "AlwaysAllow", "IfHealthyBudget"',
        "a bad PDB eviction policy",
    ),
    (
        PDB % "status: {disruptedPods: {p: soon}}",
        "poddisruptionbudget default/b",
        "status.disruptedPods[p]",
        '"soon": expected an RFC 3339 time',
        "a bad disruption time",
    ),
    (
        "{kind: PriorityClass, metadata: {name: p}, value: high}",
        "priorityclass p",
        "value",
        'expected an integer, got "high"',
        "a PriorityClass value given a string",
    ),
    (
        "{kind: PriorityClass, metadata: {name: p}, value: 1, preemptionPolicy: Sometimes}",
        "priorityclass p",
        "preemptionPolicy",
        'Unsupported value: "Sometimes": supported values: "PreemptLowerPriority", "Never"',
        "a PriorityClass with a bad policy",
    ),
    (
        "{kind: PriorityClass, metadata: {name: system-x}, value: 1}",
        "priorityclass system-x",
        "metadata.name",
        "Forbidden: priority class names with 'system-' prefix are reserved for system use "
        "only. error: system-x is not a known system priority class",
        "a PriorityClass with a reserved name",
    ),
    (
        "{kind: Namespace, metadata: {name: a.b}}",
        "namespace a.b",
        "metadata.name",
        'Invalid value: "a.b": a lowercase RFC 1123 label',
        "a Namespace name that is not a DNS label",
    ),
    (
        "{kind: Deployment, metadata: {name: d}, spec: {template: {}}}",
        "deployment default/d",
        "spec.selector",
        "Required value",
        "a Deployment without selector",
    ),
    (
        "{kind: Deployment, metadata: {name: d}, spec: {selector: {}}}",
        "deployment default/d",
        "spec.selector",
        'Invalid value: "{}": empty selector is invalid for deployment',
        "a Deployment with an empty selector",
    ),
    (
        RS % "template: {metadata: {labels: {a: c}}}",
        "replicaset default/r",
        "spec.template.metadata.labels",
        'Invalid value: {"a": "c"}: `selector` does not match template `labels`',
        "a ReplicaSet whose selector does not match its template",
    ),
    (
        RS % "replicas: -1",
        "replicaset default/r",
        "spec.replicas",
        "Invalid value: -1: must be greater than or equal to 0",
        "negative replicas",
    ),
    (
        RS % (RS_TEMPLATE % "resources: {requests: {cpu: x}}"),
        "replicaset default/r",
        "spec.template.spec.containers[0].resources.requests.cpu",
        f'"x": {QUANTITY_RE_MSG}',
        "a bad quantity in a template",
    ),
    (
        "{kind: PodDisruptionBudget, apiVersion: policy/v1beta1, metadata: {name: b}}",
        "poddisruptionbudget default/b",
        "apiVersion",
        'no matches for kind "PodDisruptionBudget" in version "policy/v1beta1"',
        "an apiVersion no longer served",
    ),
    (
        # kubectl validates before sending: "error validating data: [apiVersion not
        # set, kind not set]" (both missing are listed in brackets).
        "{metadata: {name: x}}",
        "object #0",
        None,
        "error validating data: [apiVersion not set, kind not set]",
        "a document without kind",
    ),
    (
        "{kind: Pod, apiVersion: 1}",
        "pod #0",
        "apiVersion",
        "expected a string, got 1",
        "an apiVersion that is not a string",
    ),
]


@pytest.mark.parametrize(
    ("raw", "obj", "field", "message"), [pytest.param(*c[:4], id=c[4]) for c in OTHER_ERRORS]
)
def test_other_errors(raw: str, obj: str | None, field: str | None, message: str) -> None:
    err = load_error(y(raw))
    assert (err.source, err.obj, err.field) == ("in.yaml", obj, field)
    assert err.message.startswith(message), err.message


def test_duplicates_name_both_sources() -> None:
    with pytest.raises(InputError) as exc:
        load_objects(
            [
                doc(POD, "a.yaml", 0),
                doc(y("{kind: Node, metadata: {name: n}}"), "a.yaml", 1),
                doc(POD, "b.yaml", 3),
            ]
        )
    assert str(exc.value) == (
        "b.yaml: pod default/web-1: defined twice: first in a.yaml (object 0), "
        "again in b.yaml (object 3)"
    )


@pytest.mark.parametrize(
    "raws",
    [
        pytest.param(
            [POD, patched(POD, "metadata: {namespace: other}")],
            id="one pod name in two namespaces",
        ),
        pytest.param(
            [y("{kind: Node, metadata: {name: x}}"), y("{kind: Namespace, metadata: {name: x}}")],
            id="one name, different kinds",
        ),
        pytest.param(
            [WORKLOAD, patched(WORKLOAD, "kind: ReplicaSet")],
            id="a Deployment and a ReplicaSet of one name",
        ),
    ],
)
def test_not_duplicates(raws: list[dict[str, Any]]) -> None:
    assert len(load(*raws).objects) == len(raws)


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param("{kind: Node, metadata: {name: x}}", id="two nodes"),
        pytest.param(
            "{kind: KubeSchedulerConfiguration, apiVersion: kubescheduler.config.k8s.io/v1}",
            id="two scheduler configurations",
        ),
    ],
)
def test_duplicates_of_cluster_scoped_kinds(raw: str) -> None:
    with pytest.raises(InputError, match="defined twice"):
        load(y(raw), y(raw))


def test_file_to_objects_end_to_end(tmp_path: Path) -> None:
    f = tmp_path / "pods.yaml"
    f.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web-1\nspec:\n  containers:\n"
        "  - name: c\n    resources:\n      requests:\n        cpu: abc\n"
    )
    with pytest.raises(InputError) as exc:
        load_objects(read_documents([str(f)]))
    assert str(exc.value) == (
        f"{f}: pod default/web-1: spec.containers[0].resources.requests.cpu: "
        f'"abc": {QUANTITY_RE_MSG}'
    )


# --------------------------------------------------------------------------- robustness

_FIELDS_TEXT = """
    kind apiVersion metadata name namespace labels annotations spec status items
    containers initContainers resources requests limits cpu memory ports containerPort hostPort
    protocol affinity nodeAffinity podAffinity podAntiAffinity nodeSelectorTerms
    matchExpressions matchFields matchLabels requiredDuringSchedulingIgnoredDuringExecution
    preferredDuringSchedulingIgnoredDuringExecution labelSelector topologyKey weight preference
    podAffinityTerm key operator values value effect tolerations taints tolerationSeconds
    topologySpreadConstraints maxSkew whenUnsatisfiable minDomains priority priorityClassName
    preemptionPolicy hostNetwork schedulingGates capacity allocatable conditions images names
    sizeBytes minAvailable maxUnavailable selector disruptedPods replicas template globalDefault
    creationTimestamp startTime phase ownerReferences controller overhead restartPolicy nodeName
    type nodeSelector unschedulable
"""
FIELD_NAMES = sorted(set(_FIELDS_TEXT.split()))
KIND_VERSIONS = [
    ("Pod", "v1"),
    ("Node", "v1"),
    ("Namespace", "v1"),
    ("PriorityClass", "scheduling.k8s.io/v1"),
    ("PodDisruptionBudget", "policy/v1"),
    ("Deployment", "apps/v1"),
    ("ReplicaSet", "apps/v1"),
    ("KubeSchedulerConfiguration", "kubescheduler.config.k8s.io/v1"),
    ("Service", "v1"),
]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**65), max_value=2**65),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(
        [
            "",
            "a",
            "1",
            "500m",
            "1Gi",
            "-1",
            "50%",
            "In",
            "Exists",
            "NoSchedule",
            "2024-01-02T03:04:05Z",
        ]
    ),
    st.text(max_size=8),
)
keys = st.one_of(st.sampled_from(FIELD_NAMES), st.text(max_size=5), st.integers(0, 3))
values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(keys, inner, max_size=6)),
    max_leaves=40,
)


@st.composite
def documents(draw: st.DrawFn) -> Any:
    """Random nested values, mostly shaped like objects of the kinds we convert."""
    if draw(st.booleans()):
        return draw(values)
    kind, api_version = draw(st.sampled_from(KIND_VERSIONS))
    raw: dict[Any, Any] = draw(st.dictionaries(keys, values, max_size=6))
    raw["kind"] = kind
    raw["apiVersion"] = api_version
    if draw(st.booleans()):
        meta = draw(st.dictionaries(keys, values, max_size=4))
        meta["name"] = draw(st.sampled_from(["a", "b", "Bad_Name", ""]))
        raw["metadata"] = meta
    return raw


@settings(max_examples=scaled(400), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(documents(), max_size=4))
def test_random_documents_raise_only_input_error(raws: list[Any]) -> None:
    docs = [Document(source="fuzz.yaml", index=i, raw=r) for i, r in enumerate(raws)]
    try:
        load_objects(docs)
    except InputError as err:
        assert err.source == "fuzz.yaml"
        assert "\n" not in str(err)


@settings(max_examples=scaled(200), deadline=None)
@given(st.text(max_size=200))
def test_random_text_raises_only_input_error(text: str) -> None:
    try:
        load_objects(documents_from_text(text, "fuzz.yaml"))
    except InputError as err:
        assert err.source == "fuzz.yaml"


FULL_POD = patched(
    POD,
    """
    metadata:
      labels: {a: b}
      creationTimestamp: 2024-01-02T03:04:05Z
      ownerReferences: [{kind: ReplicaSet, name: r, controller: true}]
    spec:
      hostNetwork: true
      priority: 5
      preemptionPolicy: Never
      overhead: {cpu: 10m}
      resources: {limits: {cpu: "2"}}
      containers:
      - name: c
        resources: {requests: {cpu: "1"}, limits: {memory: 1Gi}}
        ports: [{containerPort: 80, hostPort: 80, protocol: TCP}]
      initContainers: [{name: i, restartPolicy: Always}]
      nodeSelector: {a: b}
      tolerations: [{key: k, operator: Exists, effect: NoExecute, tolerationSeconds: 1}]
      schedulingGates: [{name: g}]
      topologySpreadConstraints:
      - maxSkew: 1
        topologyKey: z
        whenUnsatisfiable: DoNotSchedule
        minDomains: 1
        labelSelector: {matchLabels: {a: b}}
        matchLabelKeys: [x]
        nodeTaintsPolicy: Honor
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
            - matchExpressions: [{key: k, operator: In, values: [v]}]
              matchFields: [{key: metadata.name, operator: In, values: [n]}]
          preferredDuringSchedulingIgnoredDuringExecution:
          - {weight: 1, preference: {matchExpressions: [{key: k, operator: Exists}]}}
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - topologyKey: z
            labelSelector: {matchExpressions: [{key: a, operator: In, values: [b]}]}
            namespaces: [x]
            namespaceSelector: {}
            matchLabelKeys: [a]
          preferredDuringSchedulingIgnoredDuringExecution:
          - {weight: 5, podAffinityTerm: {topologyKey: z}}
    status:
      phase: Running
      startTime: 2024-01-02T03:04:05Z
      conditions: [{type: Ready, status: "True", lastTransitionTime: 2024-01-02T03:04:05Z}]
    """,
)
SEEDS: list[dict[str, Any]] = [
    FULL_POD,
    y("""
    kind: Node
    metadata: {name: n}
    spec: {taints: [{key: k, effect: NoSchedule}], unschedulable: true}
    status:
      capacity: {cpu: "1"}
      allocatable: {cpu: "1"}
      conditions: [{type: Ready, status: "True"}]
      images: [{names: [a], sizeBytes: 1}]
    """),
    y("""
    kind: PodDisruptionBudget
    metadata: {name: b}
    spec:
      minAvailable: 10%
      selector: {matchLabels: {a: b}}
      unhealthyPodEvictionPolicy: AlwaysAllow
    status: {disruptedPods: {p: 2024-01-02T03:04:05Z}, expectedPods: 1}
    """),
    patched(
        WORKLOAD,
        json.dumps(
            {
                "spec": {
                    "selector": {"matchLabels": {"a": "b"}},
                    "template": {"metadata": {"labels": {"a": "b"}}, "spec": FULL_POD["spec"]},
                }
            }
        ),
    ),
    y("{kind: PriorityClass, metadata: {name: p}, value: 1, globalDefault: true}"),
    y("{kind: Namespace, metadata: {name: n, labels: {a: b}}}"),
]


def test_seed_documents_are_valid() -> None:
    assert len(load(*SEEDS).objects) == len(SEEDS)


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path to a value inside ``node`` (kind/apiVersion excepted)."""
    if isinstance(node, dict):
        items: list[tuple[Any, Any]] = list(node.items())
    elif isinstance(node, list):
        items = list(enumerate(node))
    else:
        return []
    out: list[tuple[Any, ...]] = []
    for k, v in items:
        if prefix == () and k in ("kind", "apiVersion"):
            continue
        out.append((*prefix, k))
        out.extend(_paths(v, (*prefix, k)))
    return out


SEED_PATHS = [(i, path) for i, seed in enumerate(SEEDS) for path in _paths(seed)]


@st.composite
def mutated(draw: st.DrawFn) -> Any:
    """A valid seed with one to three values (anywhere, uniformly over all paths of all
    seeds) replaced by random values, so deep fields (affinity terms ...) get bad
    values too."""
    i, _ = draw(st.sampled_from(SEED_PATHS))
    raw = copy.deepcopy(SEEDS[i])
    for _ in range(draw(st.integers(1, 3))):
        paths = _paths(raw)
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        node: Any = raw
        for k in path[:-1]:
            node = node[k]
        node[path[-1]] = draw(values)
    return raw


@settings(max_examples=scaled(600), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_mutated_valid_documents_raise_only_input_error(raw: Any) -> None:
    try:
        load_objects([Document(source="fuzz.yaml", index=0, raw=raw)])
    except InputError as err:
        assert err.source == "fuzz.yaml"
        assert "\n" not in str(err)


# --------------------------------------------------------------------------- the API's own output

POD_LIST_JSON = """{
  "kind": "PodList",
  "apiVersion": "v1",
  "metadata": {"resourceVersion": "4711"},
  "items": [
    {"metadata": {"name": "web-1", "namespace": "prod", "uid": "u1",
                  "managedFields": [{"manager": "kube-controller-manager", "operation": "Update",
                                     "apiVersion": "v1", "fieldsType": "FieldsV1",
                                     "fieldsV1": {"f:metadata": {"f:labels": {".": {},
                                                  "f:app": {}}},
                                                  "f:spec": {"f:containers": {
                                                  "k:{\\"name\\":\\"c\\"}": {".": {}}}}}}]},
     "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "100m"}}}],
              "someFutureField": {"x": 1}},
     "status": {"phase": "Pending", "qosClass": "Burstable"}}
  ]
}"""


def test_a_raw_api_pod_list_gives_its_items_kind_and_version() -> None:
    # GET /api/v1/pods returns a PodList whose items carry no kind/apiVersion;
    # managedFields and fields we do not know are kept by the API server, ignored here.
    (p,) = load_objects(documents_from_text(POD_LIST_JSON, "pods.json")).objects
    assert (p.kind, p.obj.namespace, p.obj.name) == ("Pod", "prod", "web-1")
    assert p.obj.spec.containers[0].requests == {"cpu": 100}


def test_a_typed_list_item_keeps_what_it_says() -> None:
    text = (
        "kind: NodeList\napiVersion: v1\nitems:\n"
        "- {metadata: {name: n1}}\n"
        "- {kind: Pod, apiVersion: v1, metadata: {name: p}, spec: {containers: [{name: c}]}}\n"
    )
    result = load_objects(documents_from_text(text, "dump.yaml"))
    assert [(o.kind, o.obj.name) for o in result.objects] == [("Node", "n1"), ("Pod", "p")]


def test_kubectl_get_yaml_of_mixed_kinds() -> None:
    # `kubectl get nodes,pods,pdb -o yaml`: kind List, each item with its own kind.
    text = """
apiVersion: v1
kind: List
metadata: {resourceVersion: ""}
items:
- apiVersion: v1
  kind: Node
  metadata:
    name: n1
    managedFields:
    - {manager: kubelet, operation: Update, fieldsType: FieldsV1, fieldsV1: {f:status: {}}}
  status: {allocatable: {cpu: "2"}, nodeInfo: {kubeletVersion: v1.36.0}}
- apiVersion: policy/v1
  kind: PodDisruptionBudget
  metadata: {name: b, namespace: default}
  spec: {maxUnavailable: 1, selector: {matchLabels: {app: web}}}
"""
    result = load_objects(documents_from_text(text, "dump.yaml"))
    assert [o.kind for o in result.objects] == ["Node", "PodDisruptionBudget"]


def test_a_generic_list_item_without_api_version_is_refused() -> None:
    text = "apiVersion: v1\nkind: List\nitems:\n- {kind: Pod, metadata: {name: p}}\n"
    with pytest.raises(InputError) as exc:
        load_objects(documents_from_text(text, "dump.yaml"))
    assert str(exc.value) == "dump.yaml: pod default/p: error validating data: apiVersion not set"


@pytest.mark.parametrize(
    ("raw", "label", "message"),
    [
        pytest.param(
            "{kind: Node, metadata: {name: n1}}",
            "node n1",
            "error validating data: apiVersion not set",
            id="kubectl: apiVersion not set",
        ),
        pytest.param(
            "{apiVersion: v1, metadata: {name: n1}}",
            "object #0",
            "error validating data: kind not set",
            id="kubectl: kind not set",
        ),
        pytest.param(
            "{kind: ConfigMap, metadata: {name: c, namespace: x}}",
            "configmap x/c",
            "error validating data: apiVersion not set",
            id="also for kinds we ignore",
        ),
    ],
)
def test_missing_api_version_or_kind(raw: str, label: str, message: str) -> None:
    with pytest.raises(InputError) as exc:
        load_objects([Document("in.yaml", 0, y(raw))])
    assert (exc.value.obj, exc.value.field, exc.value.message) == (label, None, message)


@pytest.mark.parametrize(
    ("raw", "label"),
    [
        pytest.param(
            "{apiVersion: extensions/v1beta1, kind: Deployment, metadata: {name: d}}",
            "deployment default/d",
            id="extensions/v1beta1 Deployment (removed in v1.16)",
        ),
        pytest.param(
            "{apiVersion: extensions/v1beta1, kind: ReplicaSet, metadata: {name: r}}",
            "replicaset default/r",
            id="extensions/v1beta1 ReplicaSet",
        ),
        pytest.param(
            "{apiVersion: apps/v1beta2, kind: Deployment, metadata: {name: d}}",
            "deployment default/d",
            id="apps/v1beta2 Deployment",
        ),
        pytest.param(
            "{apiVersion: policy/v1beta1, kind: PodDisruptionBudget, metadata: {name: b}}",
            "poddisruptionbudget default/b",
            id="policy/v1beta1 PodDisruptionBudget (removed in v1.25)",
        ),
        pytest.param(
            "{apiVersion: scheduling.k8s.io/v1beta1, kind: PriorityClass, metadata: {name: p}}",
            "priorityclass p",
            id="scheduling.k8s.io/v1beta1 PriorityClass",
        ),
    ],
)
def test_removed_api_versions(raw: str, label: str) -> None:
    data = y(raw)
    with pytest.raises(InputError) as exc:
        load_objects([Document("in.yaml", 0, data)])
    assert str(exc.value) == (
        f'in.yaml: {label}: apiVersion: no matches for kind "{data["kind"]}" in version '
        f'"{data["apiVersion"]}"'
    )


def test_kinds_that_can_change_scheduling_are_counted_apart() -> None:
    result = load(
        y("{apiVersion: v1, kind: ResourceQuota, metadata: {name: q}}"),
        y("{apiVersion: v1, kind: LimitRange, metadata: {name: l}}"),
        y("{apiVersion: v1, kind: LimitRange, metadata: {name: m}}"),
        y("{apiVersion: resource.k8s.io/v1, kind: ResourceClaim, metadata: {name: c}}"),
        y("{apiVersion: example.com/v1, kind: LimitRange, metadata: {name: other}}"),
        y("{apiVersion: v1, kind: Service, metadata: {name: s}}"),
    )
    assert result.unmodelled == {"LimitRange": 2, "ResourceQuota": 1, "ResourceClaim": 1}
    # someone else's LimitRange is just ignored, as is a Service
    assert result.ignored == {"LimitRange": 1, "Service": 1}


def test_unmodelled_summary_line() -> None:
    from kubesched.api.unmodelled import unmodelled_summary

    assert unmodelled_summary({"ResourceQuota": 1, "LimitRange": 2}) == (
        "3 objects that can change scheduling are not modelled: 2 LimitRange, 1 ResourceQuota"
    )
    assert unmodelled_summary({"RuntimeClass": 1}) == (
        "1 object that can change scheduling is not modelled: 1 RuntimeClass"
    )
    assert unmodelled_summary({}) == ""


CLAIMS_POD = patched(POD, "spec: {resourceClaims: [{name: gpu, resourceClaimName: g}]}")


def test_pods_with_resource_claims_are_skipped_not_refused() -> None:
    deployment = patched(
        WORKLOAD,
        "spec: {template: {spec: {resourceClaims: [{name: gpu, resourceClaimTemplateName: t}]}}}",
    )
    result = load(
        CLAIMS_POD, {**deployment, "kind": "Deployment"}, y("{kind: Node, metadata: {name: n}}")
    )
    assert result.skipped_claims == ["pod default/web-1", "deployment prod/web"]
    assert [o.kind for o in result.objects] == ["Node"]


def test_a_skipped_pod_is_still_validated() -> None:
    bad = patched(CLAIMS_POD, "spec: {containers: [{name: c, resources: {requests: {cpu: x}}}]}")
    with pytest.raises(InputError, match=r"spec\.containers\[0\]\.resources\.requests\.cpu"):
        load(bad)


@pytest.mark.parametrize(
    ("fragment", "field", "message"),
    [
        pytest.param(
            "metadata: {annotations: {kubesched.io/delete-after: 5m}}",
            'metadata.annotations["kubesched.io/delete-after"]',
            'unknown simulation annotation; did you mean "kubesched.io/delete-at"? (known: '
            "kubesched.io/create-at, kubesched.io/delete-at, kubesched.io/run-for)",
            id="a typo",
        ),
        pytest.param(
            "metadata: {annotations: {kubesched.io/priority: high}}",
            'metadata.annotations["kubesched.io/priority"]',
            "unknown simulation annotation (known: kubesched.io/create-at, "
            "kubesched.io/delete-at, kubesched.io/run-for)",
            id="an annotation that does not exist",
        ),
    ],
)
def test_unknown_simulation_annotations(fragment: str, field: str, message: str) -> None:
    err = load_error(patched(POD, fragment))
    assert (err.obj, err.field, err.message) == ("pod default/web-1", field, message)


def test_unknown_simulation_annotation_in_a_template() -> None:
    raw = patched(
        {**WORKLOAD, "kind": "Deployment"},
        "spec: {template: {metadata: {annotations: {kubesched.io/runfor: 5m}}}}",
    )
    err = load_error(raw)
    assert err.field == 'spec.template.metadata.annotations["kubesched.io/runfor"]'
    assert err.message.startswith(
        'unknown simulation annotation; did you mean "kubesched.io/run-for"?'
    )


def test_other_annotations_and_known_ones_are_fine() -> None:
    pod = load_pod(
        "metadata: {annotations: {kubesched.io/run-for: 5m, example.io/kubesched.io: x, "
        "kubesched.io.other/x: y}}"
    )
    assert pod.annotations["kubesched.io/run-for"] == "5m"
