"""A StatefulSet's volumeClaimTemplates on the simulated cluster
(sim/controllers/stateful_claims.py and the StatefulSet controller) against
upstream pkg/controller/statefulset: stateful_pod_control_test.go
(TestStatefulPodControlCreatesPods, ...CreatePodExists, ...CreatePodPvcCreateFailure,
...CreatePodPVCDeleting, ...RetentionPolicyUpdate, ...RetainDeletionPolicyUpdate,
TestPodClaimIsStale), stateful_set_utils_test.go (TestGetPersistentVolumeClaims,
TestUpdateStorage), stateful_set_control_test.go (TestStatefulSetControl subtests
run over the retention policies: ReplacesPods, ScalesDown, RecreatesPVCForPendingPod)
and stateful_set_test.go (TestStaleOwnerRefOnScaleup).

The rig has no scheduler: the test binds pods (Running and Ready at once)."""

from __future__ import annotations

import textwrap

import pytest

from kubesched.api.load import documents_from_text, load_objects
from kubesched.api.storage import PersistentVolumeClaim, StorageClass
from kubesched.api.types import OwnerReference, Pod
from tests.builders import make_pod
from tests.sim.controllers.rig import Rig, pods_from, workload

UID = "5e000000-0000-4000-8000-0000000000c1"
SET_REF = OwnerReference("apps/v1", "StatefulSet", "web", UID, True)

DATA = """
  - metadata: {name: data, labels: {tier: db}, annotations: {note: kept}}
    spec:
      accessModes: [ReadWriteOnce]
      resources: {requests: {storage: 1Gi}}"""


def sts(
    replicas: int = 1,
    policy: str = "OrderedReady",
    templates: str = DATA,
    retention: str = "",
    selector: str = "{matchLabels: {app: web}}",
    volumes: str = "",
) -> str:
    text = f"""
apiVersion: apps/v1
kind: StatefulSet
metadata: {{name: web, uid: {UID}}}
spec:
  replicas: {replicas}
  podManagementPolicy: {policy}
  serviceName: web
  selector: {selector}
  template:
    metadata: {{labels: {{app: web, name: foo, test: foo}}}}
    spec:
      containers: [{{name: c, image: nginx}}]{volumes}
  volumeClaimTemplates:{templates}
"""
    if retention:
        text += f"  persistentVolumeClaimRetentionPolicy: {retention}\n"
    return text


def storage_objects(rig: Rig, text: str) -> None:
    """Create the storage objects of ``text`` as the scenario does (input objects)."""
    result = load_objects(documents_from_text(textwrap.dedent(text), "storage.yaml"))
    for loaded in result.objects:
        assert isinstance(loaded.obj, PersistentVolumeClaim | StorageClass)
        rig.cluster.volumes.create(loaded.obj)
    rig.settle()


def claim(rig: Rig, name: str) -> PersistentVolumeClaim:
    pvc = rig.cluster.volumes.get_pvc("default", name)
    assert pvc is not None, name
    return pvc


def claims(rig: Rig) -> list[str]:
    return sorted(p.name for p in rig.cluster.volumes.pvcs.values())


def volumes(pod: Pod) -> list[tuple[str, str, str]]:
    return [(v.name, v.source, v.claim_name) for v in pod.spec.volumes]


def warnings(rig: Rig) -> list[tuple[str, str]]:
    return [(e.reason, e.message) for e in rig.events("StatefulSet") if e.type == "Warning"]


# --------------------------------------------------------------------------- creation


def test_claims_are_created_before_the_pod() -> None:
    """TestStatefulPodControlCreatesPods / getPersistentVolumeClaims: the claim
    data-web-0 (<template>-<sts>-<ordinal>) in the set's namespace, the template's
    spec, labels and annotations, exists when the pod is created, and the pod has a
    persistentVolumeClaim volume named after the template."""
    rig = Rig()
    rig.nodes("n1")
    seen: list[str] = []

    class Spy:
        def on_pod_add(self, pod: Pod) -> None:
            seen.append(f"{pod.name}:{claims(rig)}")

        def __getattr__(self, name: str) -> object:
            return lambda *a: None

    rig.cluster.watchers.insert(0, Spy())  # type: ignore[arg-type]
    rig.create(workload(sts(1)))
    assert seen == ["web-0:['data-web-0']"]
    pvc = claim(rig, "data-web-0")
    assert (pvc.namespace, pvc.request, pvc.access_modes) == ("default", 2**30, ("ReadWriteOnce",))
    assert dict(pvc.annotations) == {"note": "kept"}
    assert dict(pvc.labels) == {"tier": "db", "app": "web"}
    assert pvc.owner_references == ()  # Retain/Retain: no owner
    assert pvc.storage_class_name is None  # no default class: none
    assert volumes(rig.pod("web-0")) == [("data", "persistentVolumeClaim", "data-web-0")]
    assert warnings(rig) == []


@pytest.mark.parametrize(
    ("selector", "template_labels", "want"),
    [
        pytest.param(
            "{matchExpressions: [{key: app, operator: In, values: [web]}]}",
            "",
            {},
            id="TestGetPersistentVolumeClaims/nil inherits statefulset labels",
        ),
        pytest.param(
            "{matchLabels: {test: foo}}",
            "",
            {"test": "foo"},
            id="TestGetPersistentVolumeClaims/nil template labels take the selector's",
        ),
        pytest.param(
            "{matchLabels: {name: foo}}",
            ", labels: {test: test}",
            {"test": "test", "name": "foo"},
            id="TestGetPersistentVolumeClaims/non-overlapping labels merge",
        ),
        pytest.param(
            "{matchLabels: {test: foo}}",
            ", labels: {test: test}",
            {"test": "foo"},
            id="TestGetPersistentVolumeClaims/overlapping labels prefer the statefulset's",
        ),
    ],
)
def test_claim_labels(selector: str, template_labels: str, want: dict[str, str]) -> None:
    """The claim's labels: the template's, with the selector's matchLabels winning."""
    template = f"""
  - metadata: {{name: datadir{template_labels}}}
    spec:
      accessModes: [ReadWriteOnce]
      resources: {{requests: {{storage: 1}}}}"""
    rig = Rig()
    rig.create(workload(sts(1, templates=template, selector=selector)))
    assert dict(claim(rig, "datadir-web-0").labels) == want


def test_a_template_volume_of_the_same_name_is_replaced() -> None:
    """TestUpdateStorage / updateStorage: the claim volumes first, then the pod
    template's other volumes; one named like a claim template is replaced."""
    rig = Rig()
    extra = "\n      volumes: [{name: data, emptyDir: {}}, {name: cache, emptyDir: {}}]"
    rig.create(workload(sts(1, volumes=extra)))
    assert volumes(rig.pod("web-0")) == [
        ("data", "persistentVolumeClaim", "data-web-0"),
        ("cache", "emptyDir", ""),
    ]


def test_the_default_storage_class_is_given_by_admission() -> None:
    """A template without storageClassName: the DefaultStorageClass admission of the
    claim's creation gives it the default class; an explicit class is kept."""
    rig = Rig()
    storage_objects(
        rig,
        """
        apiVersion: storage.k8s.io/v1
        kind: StorageClass
        metadata:
          name: standard
          annotations: {storageclass.kubernetes.io/is-default-class: "true"}
        provisioner: kubernetes.io/no-provisioner
        volumeBindingMode: WaitForFirstConsumer
        """,
    )
    fast = """
  - metadata: {name: fast}
    spec:
      storageClassName: fast
      accessModes: [ReadWriteOnce]
      resources: {requests: {storage: 1Gi}}"""
    rig.create(workload(sts(1, templates=DATA + fast)))
    assert claim(rig, "data-web-0").storage_class_name == "standard"
    assert claim(rig, "fast-web-0").storage_class_name == "fast"
    assert [v[2] for v in volumes(rig.pod("web-0"))] == ["data-web-0", "fast-web-0"]


def test_an_existing_claim_is_reused() -> None:
    """TestStatefulPodControlCreatePodExists: a claim of the input (a dump) with the
    pod's claim name is used as it is: nothing is created, no event."""
    rig = Rig()
    storage_objects(
        rig,
        """
        apiVersion: v1
        kind: PersistentVolumeClaim
        metadata: {name: data-web-0, uid: dumped-claim}
        spec:
          accessModes: [ReadWriteOnce]
          resources: {requests: {storage: 5Gi}}
        """,
    )
    rig.create(workload(sts(1)))
    assert claims(rig) == ["data-web-0"]
    assert (claim(rig, "data-web-0").uid, claim(rig, "data-web-0").request) == (
        "dumped-claim",
        5 * 2**30,
    )
    assert volumes(rig.pod("web-0")) == [("data", "persistentVolumeClaim", "data-web-0")]
    assert rig.events("StatefulSet") == []


@pytest.mark.parametrize(
    "retention",
    [
        pytest.param("", id="TestStatefulSetControl/ReplacesPods/Monotonic/nullPolicy"),
        pytest.param(
            "{whenScaled: Delete, whenDeleted: Delete}",
            id="TestStatefulSetControl/ReplacesPods/Monotonic/Delete",
        ),
    ],
)
def test_a_deleted_pod_comes_back_to_its_claim(retention: str) -> None:
    """TestStatefulSetControl/ReplacesPods: a deleted (or preempted) replica is created
    again under its name with the same claim, which no pod owns (a replica in range
    never gets a pod owner reference, whatever the policy)."""
    rig = Rig()
    rig.nodes("n1")
    rig.create(workload(sts(2, retention=retention)))
    rig.bind("web-0", "n1")
    rig.bind("web-1", "n1")
    uids = {n: claim(rig, n).uid for n in ("data-web-0", "data-web-1")}
    old = rig.pod("web-0").uid
    rig.delete("web-0")
    rig.advance(30)
    again = rig.pod("web-0")
    assert again.uid != old and again.node_name == ""
    assert volumes(again) == [("data", "persistentVolumeClaim", "data-web-0")]
    assert {n: claim(rig, n).uid for n in uids} == uids
    for n in uids:
        assert all(r.kind != "Pod" for r in claim(rig, n).owner_references)


def test_a_pending_pod_gets_its_claims_again() -> None:
    """TestStatefulSetControl/RecreatesPVCForPendingPod: the claims of a Pending
    replica are created again when missing (createMissingPersistentVolumeClaims)."""
    rig = Rig()
    rig.create(workload(sts(1)))
    first = claim(rig, "data-web-0").uid
    rig.cluster.volumes.delete_pvc("default/data-web-0")
    rig.settle()
    assert rig.pod("web-0").phase == "Pending"
    assert claim(rig, "data-web-0").uid != first


# --------------------------------------------------------------------------- failures


def test_a_claim_being_deleted_blocks_the_pod() -> None:
    """TestStatefulPodControlCreatePodPVCDeleting: the pod's claim exists but is being
    deleted (PVC protection holds it for a running pod that uses it): no pod, one
    Warning event; once the claim is gone, a new claim and the pod are created."""
    rig = Rig()
    rig.nodes("n1")
    (user,) = pods_from(
        """
        apiVersion: v1
        kind: Pod
        metadata: {name: user}
        spec:
          nodeName: n1
          containers: [{name: c, image: busybox}]
          volumes: [{name: d, persistentVolumeClaim: {claimName: data-web-0}}]
        """
    )
    rig.add_pods(user)
    storage_objects(
        rig,
        """
        apiVersion: v1
        kind: PersistentVolumeClaim
        metadata: {name: data-web-0, uid: old-claim, deletionTimestamp: "2024-05-01T00:00:00Z"}
        spec:
          accessModes: [ReadWriteOnce]
          resources: {requests: {storage: 1Gi}}
        """,
    )
    assert claim(rig, "data-web-0").deletion_timestamp is not None
    rig.create(workload(sts(1)))
    assert rig.names("web") == []
    assert warnings(rig) == [
        (
            "FailedCreate",
            "create Pod web-0 in StatefulSet web failed error: pvc data-web-0 is being deleted",
        )
    ]
    rig.delete("user")
    rig.advance(30)
    assert claim(rig, "data-web-0").uid != "old-claim"
    assert volumes(rig.pod("web-0")) == [("data", "persistentVolumeClaim", "data-web-0")]


def test_a_refused_claim_gives_two_warning_events() -> None:
    """TestStatefulPodControlCreatePodPvcCreateFailure: the API server refuses the
    claim (its template has no access mode: ValidatePersistentVolumeClaimSpec's
    "at least 1 access mode is required"): a FailedCreate event for the claim and one
    for the pod, no pod; upstream's StatefulSet validation does not look into the
    templates, so the StatefulSet itself is accepted."""
    no_modes = """
  - metadata: {name: data}
    spec:
      resources: {requests: {storage: 1Gi}}"""
    rig = Rig()
    rig.nodes("n1")
    rig.create(workload(sts(1, templates=no_modes)))
    refusal = (
        'PersistentVolumeClaim "data-web-0" is invalid: '
        "spec.accessModes: Required value: at least 1 access mode is required"
    )
    assert warnings(rig) == [
        (
            "FailedCreate",
            f"create Claim data-web-0 for Pod web-0 in StatefulSet web failed error: {refusal}",
        ),
        (
            "FailedCreate",
            "create Pod web-0 in StatefulSet web failed error: "
            f"failed to create PVC data-web-0: {refusal}",
        ),
    ]
    assert rig.names() == [] and claims(rig) == []


def test_a_template_name_that_is_no_volume_name_refuses_the_pod() -> None:
    """The claim data.v1-web-0 is a valid name (a DNS subdomain), created first; the
    pod's volume data.v1 is not (a DNS label): the API server refuses the pod."""
    dotted = DATA.replace("name: data,", "name: data.v1,")
    rig = Rig()
    rig.create(workload(sts(1, templates=dotted)))
    assert claims(rig) == ["data.v1-web-0"]
    [(reason, message)] = warnings(rig)
    assert reason == "FailedCreate"
    assert message.startswith(
        'create Pod web-0 in StatefulSet web failed error: Pod "web-0" is invalid: '
        'spec.volumes[0].name: Invalid value: "data.v1": a lowercase RFC 1123 label'
    )


# --------------------------------------------------------------------------- retention policy


def member_with_claim(rig: Rig, ordinal: int) -> None:
    """A dumped replica web-<n> (bound, Running) and its claim data-web-<n>."""
    pod = (
        make_pod(f"web-{ordinal}")
        .uid(f"uid-web-{ordinal}")
        .labels(app="web", name="foo", test="foo")
        .node("n1")
        .pvc(f"data-web-{ordinal}")
    )
    pod._owners = (SET_REF,)
    rig.cluster.create_pod(pod.obj())
    storage_objects(
        rig,
        f"""
        apiVersion: v1
        kind: PersistentVolumeClaim
        metadata: {{name: data-web-{ordinal}}}
        spec:
          accessModes: [ReadWriteOnce]
          resources: {{requests: {{storage: 1Gi}}}}
        """,
    )


def test_when_deleted_delete_makes_the_set_control_the_claim() -> None:
    """TestStatefulPodControlRetentionPolicyUpdate: whenDeleted Delete, whenScaled
    Retain: the claim gets the set as controller when its pod is created."""
    rig = Rig()
    rig.create(workload(sts(1, retention="{whenDeleted: Delete, whenScaled: Retain}")))
    assert claim(rig, "data-web-0").owner_references == (SET_REF,)


def test_retain_removes_the_set_reference() -> None:
    """TestStatefulPodControlRetainDeletionPolicyUpdate: under Retain a claim the set
    controls (an earlier policy's) loses that reference."""
    rig = Rig()
    storage_objects(
        rig,
        f"""
        apiVersion: v1
        kind: PersistentVolumeClaim
        metadata:
          name: data-web-0
          ownerReferences:
          - {{apiVersion: apps/v1, kind: StatefulSet, name: web, uid: {UID}, controller: true}}
        spec:
          accessModes: [ReadWriteOnce]
          resources: {{requests: {{storage: 1Gi}}}}
        """,
    )
    rig.create(workload(sts(1)))
    assert claim(rig, "data-web-0").owner_references == ()


@pytest.mark.parametrize(
    ("retention", "kept", "set_owned"),
    [
        pytest.param(
            "",
            ["data-web-0", "data-web-1", "data-web-2"],
            False,
            id="TestStatefulSetControl/ScalesDown/Monotonic/nullPolicy",
        ),
        pytest.param(
            "{whenScaled: Retain, whenDeleted: Retain}",
            ["data-web-0", "data-web-1", "data-web-2"],
            False,
            id="TestStatefulSetControl/ScalesDown/Monotonic/Retain",
        ),
        pytest.param(
            "{whenScaled: Delete, whenDeleted: Retain}",
            ["data-web-0"],
            False,
            id="TestStatefulSetControl/ScalesDown/Monotonic/ScaleDownOnly",
        ),
        pytest.param(
            "{whenScaled: Retain, whenDeleted: Delete}",
            ["data-web-0", "data-web-1", "data-web-2"],
            True,
            id="TestStatefulSetControl/ScalesDown/Monotonic/SetDeleteOnly",
        ),
        pytest.param(
            "{whenScaled: Delete, whenDeleted: Delete}",
            ["data-web-0"],
            True,
            id="TestStatefulSetControl/ScalesDown/Monotonic/Delete",
        ),
    ],
)
def test_scale_down_keeps_or_deletes_the_condemned_claims(
    retention: str, kept: list[str], set_owned: bool
) -> None:
    """A dump of 3 replicas with their claims, the set at 1 replica: web-2 then web-1
    are deleted (30 s grace each). Under whenScaled Delete their claims get the pod
    as controller before the pod is deleted (fixPodClaim), and the garbage collector
    deletes them with it; otherwise every claim stays. The remaining replica's claim
    has the set as controller exactly when whenDeleted is Delete."""
    rig = Rig()
    rig.nodes("n1")
    for i in range(3):
        member_with_claim(rig, i)
    rig.create(workload(sts(1, retention=retention)))
    assert rig.terminating() == ["web-2"]
    rig.advance(60)
    assert rig.names() == ["web-0"]
    assert claims(rig) == kept
    assert (claim(rig, "data-web-0").owner_references == (SET_REF,)) is set_owned
    for name in kept[1:]:  # claims of gone pods under whenScaled Retain
        assert all(r.kind != "Pod" for r in claim(rig, name).owner_references)


@pytest.mark.parametrize(
    ("retention", "kept"),
    [
        pytest.param("", ["data-web-0", "data-web-1"], id="whenDeleted=Retain (default)"),
        pytest.param("{whenDeleted: Delete}", [], id="whenDeleted=Delete"),
    ],
)
def test_deleting_the_set(retention: str, kept: list[str]) -> None:
    """The StatefulSet is deleted: its pods go (30 s grace); under whenDeleted Delete
    the garbage collector deletes the claims it controls, PVC protection keeping them
    (terminating) until the pods using them are gone."""
    rig = Rig()
    rig.nodes("n1")
    w = workload(sts(2, "Parallel", retention=retention))
    rig.create(w)
    rig.bind("web-0", "n1")
    rig.bind("web-1", "n1")
    rig.cm.delete(w)
    rig.settle()
    assert claims(rig) == ["data-web-0", "data-web-1"]
    terminating = [claim(rig, n).deletion_timestamp is not None for n in claims(rig)]
    assert terminating == [not kept, not kept]
    rig.advance(30)
    assert rig.names() == []
    assert claims(rig) == kept


def test_a_stale_claim_holds_back_its_pod() -> None:
    """TestStaleOwnerRefOnScaleup / TestPodClaimIsStale: under whenScaled Delete, the
    claim data-web-2 still controlled by an earlier web-2 (another uid) keeps web-2
    from being created until the claim is gone."""
    rig = Rig()
    storage_objects(
        rig,
        """
        apiVersion: v1
        kind: PersistentVolumeClaim
        metadata:
          name: data-web-2
          ownerReferences: [{apiVersion: v1, kind: Pod, name: web-2, uid: stale, controller: true}]
        spec:
          accessModes: [ReadWriteOnce]
          resources: {requests: {storage: 1Gi}}
        """,
    )
    rig.create(workload(sts(3, "Parallel", retention="{whenScaled: Delete}")))
    assert rig.names() == ["web-0", "web-1"]
    rig.cluster.volumes.delete_pvc("default/data-web-2")
    rig.settle()
    assert rig.names() == ["web-0", "web-1", "web-2"]
    assert claim(rig, "data-web-2").owner_references == ()


def test_another_controller_keeps_its_claim() -> None:
    """UpdatePodClaimForRetentionPolicy with hasUnexpectedController: a claim another
    controller controls gets no reference from the set (whenDeleted Delete), and one
    ConflictingController Warning event."""
    rig = Rig()
    other = OwnerReference("custom/v1", "Unknown", "unknown", "xyz", True)
    storage_objects(
        rig,
        """
        apiVersion: v1
        kind: PersistentVolumeClaim
        metadata:
          name: data-web-0
          ownerReferences:
          - {apiVersion: custom/v1, kind: Unknown, name: unknown, uid: xyz, controller: true}
        spec:
          accessModes: [ReadWriteOnce]
          resources: {requests: {storage: 1Gi}}
        """,
    )
    rig.create(workload(sts(1, retention="{whenDeleted: Delete}")))
    rig.advance(10)
    assert claim(rig, "data-web-0").owner_references == (other,)
    assert warnings(rig) == [
        (
            "ConflictingController",
            "PersistentVolumeClaim data-web-0 has a conflicting OwnerReference that acts as a "
            "manging controller, the retention policy is ignored for this claim",
        )
    ]
