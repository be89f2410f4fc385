"""Conversion of the storage kinds and pod volumes (api/convert/storage.py): the
fields scheduling reads, the API server's defaults (volumeMode Filesystem,
volumeBindingMode Immediate, reclaim policies Delete for classes and Retain for
volumes, rbd pool "rbd") and its validation with upstream's wording."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kubesched.api.errors import InputError
from kubesched.api.load import documents_from_text, load_objects
from kubesched.api.storage import (
    BLOCK,
    FILESYSTEM,
    IMMEDIATE,
    RECLAIM_DELETE,
    RECLAIM_RETAIN,
    WAIT_FOR_FIRST_CONSUMER,
    CSINode,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
)
from kubesched.api.types import Pod

GI = 1024**3


def load(text: str) -> list[Any]:
    return [o.obj for o in load_objects(documents_from_text(text, "in.yaml")).objects]


def obj(kind: str, name: str, **fields: Any) -> str:
    """One object as JSON text (the loader reads JSON streams too)."""
    api = "storage.k8s.io/v1" if kind in ("StorageClass", "CSINode") else "v1"
    return json.dumps({"apiVersion": api, "kind": kind, "metadata": {"name": name}, **fields})


RWO = ["ReadWriteOnce"]
ONE_GI = {"requests": {"storage": "1Gi"}}


def one(text: str) -> Any:
    [obj] = load(text)
    return obj


def test_claim() -> None:
    pvc = one(
        """apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: data
  namespace: team
  annotations: {volume.kubernetes.io/selected-node: n1}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: fast
  selector: {matchLabels: {tier: db}}
  resources: {requests: {storage: 1.5Gi}}
status: {phase: Bound}
"""
    )
    assert isinstance(pvc, PersistentVolumeClaim)
    assert (pvc.key, pvc.request, pvc.storage_class_name, pvc.phase) == (
        "team/data",
        int(1.5 * GI),
        "fast",
        "Bound",
    )
    assert pvc.volume_mode == FILESYSTEM and pvc.access_modes == ("ReadWriteOnce",)
    assert pvc.selector is not None and dict(pvc.selector.match_labels) == {"tier": "db"}
    assert pvc.annotations["volume.kubernetes.io/selected-node"] == "n1"


def test_claim_class_unset_versus_empty() -> None:
    spec = {"accessModes": RWO, "resources": ONE_GI}
    unset, empty = load(
        obj("PersistentVolumeClaim", "a", spec=spec)
        + obj("PersistentVolumeClaim", "b", spec={**spec, "storageClassName": ""})
    )
    assert unset.storage_class_name is None  # the default class admission may fill it in
    assert empty.storage_class_name == ""  # explicitly "no class"


def test_volume() -> None:
    pv = one(
        """apiVersion: v1
kind: PersistentVolume
metadata: {name: local-a, labels: {topology.kubernetes.io/zone: z1}}
spec:
  capacity: {storage: 100Gi}
  accessModes: [ReadWriteOnce]
  volumeMode: Block
  storageClassName: local
  local: {path: /mnt}
  claimRef: {name: data}
  nodeAffinity:
    required:
      nodeSelectorTerms:
      - matchExpressions:
        - {key: kubernetes.io/hostname, operator: In, values: [n1]}
"""
    )
    assert isinstance(pv, PersistentVolume)
    assert (pv.capacity, pv.volume_mode, pv.source, pv.reclaim_policy) == (
        100 * GI,
        BLOCK,
        "local",
        RECLAIM_RETAIN,
    )
    assert pv.claim_ref is not None and pv.claim_ref.key == "default/data"
    assert pv.node_affinity is not None
    [term] = pv.node_affinity.terms
    assert [(r.key, r.operator, r.values) for r in term.match_expressions] == [
        ("kubernetes.io/hostname", "In", ("n1",))
    ]


def test_csi_volume_and_in_tree_disk() -> None:
    base = {"capacity": {"storage": "1Gi"}, "accessModes": RWO}
    csi, ebs = load(
        obj(
            "PersistentVolume",
            "a",
            spec={**base, "csi": {"driver": "d.example.com", "volumeHandle": "h-1"}},
        )
        + obj("PersistentVolume", "b", spec={**base, "awsElasticBlockStore": {"volumeID": "vol-9"}})
    )
    assert (csi.source, csi.csi_driver, csi.volume_handle) == ("csi", "d.example.com", "h-1")
    assert (ebs.source, ebs.disk) == ("awsElasticBlockStore", "vol-9")


def test_storage_class_defaults() -> None:
    sc = one(
        """apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: std}
provisioner: csi.example.com
allowedTopologies:
- matchLabelExpressions:
  - {key: topology.kubernetes.io/zone, values: [a, b]}
"""
    )
    assert isinstance(sc, StorageClass)
    assert (sc.volume_binding_mode, sc.reclaim_policy) == (IMMEDIATE, RECLAIM_DELETE)
    [term] = sc.allowed_topologies
    assert [(r.key, r.values) for r in term.match_label_expressions] == [
        ("topology.kubernetes.io/zone", ("a", "b"))
    ]
    wffc = one(
        "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: w}\n"
        "provisioner: p\nvolumeBindingMode: WaitForFirstConsumer\n"
    )
    assert wffc.volume_binding_mode == WAIT_FOR_FIRST_CONSUMER


def test_csi_node() -> None:
    csi = one(
        """apiVersion: storage.k8s.io/v1
kind: CSINode
metadata: {name: n1}
spec:
  drivers:
  - name: ebs.csi.aws.com
    nodeID: i-1
    topologyKeys: [topology.ebs.csi.aws.com/zone]
    allocatable: {count: 25}
  - {name: other.example.com, nodeID: n1}
"""
    )
    assert isinstance(csi, CSINode)
    ebs = csi.driver("ebs.csi.aws.com")
    assert ebs is not None and ebs.allocatable_count == 25
    assert ebs.topology_keys == ("topology.ebs.csi.aws.com/zone",)
    other = csi.driver("other.example.com")
    assert other is not None and other.allocatable_count is None


def test_pod_volumes() -> None:
    pod = one(
        """apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers: [{name: c, image: x}]
  volumes:
  - {name: data, persistentVolumeClaim: {claimName: data, readOnly: true}}
  - name: scratch
    ephemeral:
      volumeClaimTemplate:
        metadata: {labels: {a: b}}
        spec:
          accessModes: [ReadWriteOnce]
          resources: {requests: {storage: 2Gi}}
          storageClassName: fast
  - {name: pd, gcePersistentDisk: {pdName: disk-1}}
  - {name: ceph, rbd: {monitors: [m1, m2], image: img}}
  - {name: cfg, configMap: {name: c}}
"""
    )
    assert isinstance(pod, Pod)
    data, scratch, pd, ceph, cfg = pod.spec.volumes
    assert (data.source, data.claim_name, data.read_only) == ("persistentVolumeClaim", "data", True)
    assert scratch.template is not None
    assert (scratch.template.request, scratch.template.storage_class_name) == (2 * GI, "fast")
    assert dict(scratch.template.labels) == {"a": "b"}
    assert (pd.source, pd.disk) == ("gcePersistentDisk", "disk-1")
    assert ceph.rbd is not None and (ceph.rbd.monitors, ceph.rbd.pool) == (("m1", "m2"), "rbd")
    assert cfg.source == "configMap"


CLAIM = {"accessModes": RWO, "resources": ONE_GI}
VOLUME = {"capacity": {"storage": "1Gi"}, "accessModes": RWO}
POD = {"containers": [{"name": "c"}]}


@pytest.mark.parametrize(
    ("text", "field", "message"),
    [
        pytest.param(
            obj("PersistentVolumeClaim", "c", spec={"resources": ONE_GI}),
            "spec.accessModes",
            "Required value: at least 1 access mode is required",
            id="claim without access modes",
        ),
        pytest.param(
            obj("PersistentVolumeClaim", "c", spec={**CLAIM, "accessModes": ["ReadWriteSome"]}),
            "spec.accessModes",
            'Unsupported value: "ReadWriteSome": supported values: "ReadOnlyMany", '
            '"ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"',
            id="unknown access mode",
        ),
        pytest.param(
            obj(
                "PersistentVolumeClaim",
                "c",
                spec={**CLAIM, "resources": {"requests": {"storage": 0}}},
            ),
            "spec.resources.requests.storage",
            "Invalid value: 0: must be greater than zero",
            id="zero request",
        ),
        pytest.param(
            obj("PersistentVolumeClaim", "c", spec={**CLAIM, "volumeMode": "Raw"}),
            "spec.volumeMode",
            'Unsupported value: "Raw": supported values: "Block", "Filesystem"',
            id="unknown volume mode",
        ),
        pytest.param(
            obj("PersistentVolume", "v", spec={"accessModes": RWO, "hostPath": {"path": "/x"}}),
            "spec.capacity.storage",
            "Required value",
            id="volume without capacity",
        ),
        pytest.param(
            obj(
                "PersistentVolume",
                "v",
                spec={**VOLUME, "hostPath": {"path": "/x"}, "nfs": {"server": "s", "path": "/"}},
            ),
            "spec.nfs",
            "Forbidden: may not specify more than 1 volume type",
            id="volume with two sources",
        ),
        pytest.param(
            obj("PersistentVolume", "v", spec={**VOLUME, "csi": {"driver": "d"}}),
            "spec.csi.volumeHandle",
            "Required value",
            id="csi volume without a handle",
        ),
        pytest.param(
            obj("StorageClass", "s"),
            "provisioner",
            "Required value",
            id="class without a provisioner",
        ),
        pytest.param(
            obj("CSINode", "n", spec={"drivers": [{"name": "d", "allocatable": {"count": -1}}]}),
            "spec.drivers[0].allocatable.count",
            "Invalid value: -1: must be greater than or equal to 0",
            id="negative attach limit",
        ),
        pytest.param(
            obj(
                "Pod",
                "p",
                spec={**POD, "volumes": [{"name": "a", "emptyDir": {}}] * 2},
            ),
            "spec.volumes[1].name",
            'Duplicate value: "a"',
            id="duplicate volume name",
        ),
        pytest.param(
            obj("Pod", "p", spec={**POD, "volumes": [{"name": "a"}]}),
            "spec.volumes[0]",
            "Required value: must specify a volume type",
            id="volume without a source",
        ),
        pytest.param(
            obj("Pod", "p", spec={**POD, "volumes": [{"name": "a", "ephemeral": {}}]}),
            "spec.volumes[0].ephemeral.volumeClaimTemplate",
            "Required value",
            id="ephemeral volume without a template",
        ),
    ],
)
def test_bad_input(text: str, field: str, message: str) -> None:
    with pytest.raises(InputError) as err:
        load(text)
    assert (err.value.field, err.value.message) == (field, message)


def test_duplicate_objects_are_rejected() -> None:
    text = (
        "kind: StorageClass\napiVersion: storage.k8s.io/v1\nmetadata: {name: s}\nprovisioner: p\n"
    )
    with pytest.raises(InputError, match="defined twice"):
        load(text + "---\n" + text)
