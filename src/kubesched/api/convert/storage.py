"""The storage kinds and a pod's ``spec.volumes``, converted into ``api.storage``
with the conventions of :mod:`kubesched.api.convert`; defaulting includes
``volumeMode: Filesystem``, ``volumeBindingMode: Immediate``, reclaim policies and
``rbd.pool: rbd`` (pkg/apis/core/validation, pkg/apis/storage/validation).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Final

from kubesched.api.convert.meta import (
    check_dns_label,
    check_dns_subdomain,
    owner_reference,
    read_meta,
)
from kubesched.api.convert.selectors import label_selector, node_selector
from kubesched.api.convert.values import opt_time, resource_list
from kubesched.api.messages import child, fail, forbidden, invalid, quote, required, unsupported
from kubesched.api.reader import (
    Raw,
    as_map,
    get_bool,
    get_list,
    get_map,
    get_str,
    get_str_list,
    get_str_map,
    map_list,
    opt_enum,
    opt_int,
    opt_str,
    req_str,
)
from kubesched.api.storage import (
    ACCESS_MODES,
    AWS_EBS_SOURCE,
    BINDING_MODES,
    CLAIM_PENDING,
    CLAIM_PHASES,
    CSI_SOURCE,
    EPHEMERAL_SOURCE,
    FILESYSTEM,
    GCE_PD_SOURCE,
    IMMEDIATE,
    ISCSI_SOURCE,
    PVC_SOURCE,
    RBD_SOURCE,
    READ_WRITE_ONCE_POD,
    RECLAIM_DELETE,
    RECLAIM_POLICIES,
    RECLAIM_RETAIN,
    STORAGE,
    VOLUME_MODES,
    VOLUME_PENDING,
    VOLUME_PHASES,
    ClaimReference,
    ClaimTemplate,
    CSINode,
    CSINodeDriver,
    PersistentVolume,
    PersistentVolumeClaim,
    PodVolume,
    RBDImage,
    StorageClass,
    TopologySelectorRequirement,
    TopologySelectorTerm,
)

POD_VOLUME_SOURCES: Final = (
    "emptyDir",
    "hostPath",
    "gitRepo",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "secret",
    "nfs",
    "iscsi",
    "glusterfs",
    "flocker",
    "persistentVolumeClaim",
    "rbd",
    "cinder",
    "cephfs",
    "quobyte",
    "downwardAPI",
    "fc",
    "flexVolume",
    "configMap",
    "azureFile",
    "vsphereVolume",
    "photonPersistentDisk",
    "portworxVolume",
    "azureDisk",
    "storageos",
    "projected",
    "scaleIO",
    "csi",
    "ephemeral",
    "image",
)
"""core/v1 VolumeSource members, in validateVolumeSource's order."""

PV_SOURCES: Final = (
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "hostPath",
    "glusterfs",
    "nfs",
    "rbd",
    "quobyte",
    "cinder",
    "cephfs",
    "iscsi",
    "flexVolume",
    "azureFile",
    "vsphereVolume",
    "azureDisk",
    "photonPersistentDisk",
    "portworxVolume",
    "scaleIO",
    "local",
    "storageos",
    "csi",
    "fc",
    "flocker",
)
"""core/v1 PersistentVolumeSource members."""

DISK_FIELDS: Final = {GCE_PD_SOURCE: "pdName", AWS_EBS_SOURCE: "volumeID", ISCSI_SOURCE: "iqn"}
"""The field naming the disk of a disk volume source (``PodVolume.disk``)."""

ONE_VOLUME_TYPE: Final = "may not specify more than 1 volume type"
MUST_SPECIFY_TYPE: Final = "must specify a volume type"


# --------------------------------------------------------------------------- shared pieces


def _access_modes(raw: Raw, path: str) -> tuple[str, ...]:
    """``accessModes``: at least one, each supported, ReadWriteOncePod alone."""
    p = child(path, "accessModes")
    modes = get_str_list(raw, "accessModes", path)
    if not modes:
        raise fail(p, required("at least 1 access mode is required"))
    for mode in modes:
        if mode not in ACCESS_MODES:
            raise fail(p, unsupported(mode, sorted(ACCESS_MODES)))
    if READ_WRITE_ONCE_POD in modes and len(set(modes)) > 1:
        raise fail(p, forbidden("may not use ReadWriteOncePod with other access modes"))
    return modes


def _storage_amount(raw: Raw, key: str, path: str) -> int | None:
    """``<key>.storage`` in bytes, or None when absent; must be positive."""
    amounts = resource_list(raw, key, path)
    amount = amounts.get(STORAGE)
    if amount is not None and amount <= 0:
        raise fail(f"{child(path, key)}.{STORAGE}", invalid(amount, "must be greater than zero"))
    return amount


def _volume_mode(raw: Raw, path: str) -> str:
    return opt_enum(raw, "volumeMode", path, VOLUME_MODES) or FILESYSTEM


def _class_name(raw: Raw, path: str) -> str | None:
    name = opt_str(raw, "storageClassName", path)
    if name:
        check_dns_subdomain(name, child(path, "storageClassName"))
    return name


def claim_spec(raw: Raw, path: str) -> ClaimTemplate:
    """A PersistentVolumeClaimSpec at ``path`` (of a claim, a pod's ephemeral volume
    template or a StatefulSet's claim template); InputError where the API server
    would refuse the claim."""
    resources = get_map(raw, "resources", path)
    rpath = child(path, "resources")
    request = _storage_amount(resources, "requests", rpath)
    if request is None and raw.get("dataSource") is None and raw.get("dataSourceRef") is None:
        raise fail(f"{rpath}.requests.{STORAGE}", required())
    return ClaimTemplate(
        access_modes=_access_modes(raw, path),
        request=request,
        storage_class_name=_class_name(raw, path),
        volume_name=get_str(raw, "volumeName", path),
        selector=label_selector(raw.get("selector"), child(path, "selector")),
        volume_mode=_volume_mode(raw, path),
        volume_attributes_class_name=get_str(raw, "volumeAttributesClassName", path),
    )


# --------------------------------------------------------------------------- kinds


def convert_pvc(raw: Raw) -> tuple[PersistentVolumeClaim, dict[str, str]]:
    """A PersistentVolumeClaim (core/v1)."""
    meta = read_meta(raw, namespaced=True)
    check_dns_subdomain(meta.name, "metadata.name")
    metadata = get_map(raw, "metadata", "")
    spec = claim_spec(get_map(raw, "spec", ""), "spec")
    status = get_map(raw, "status", "")
    phase = opt_enum(status, "phase", "status", CLAIM_PHASES) or CLAIM_PENDING
    pvc = PersistentVolumeClaim(
        name=meta.name,
        namespace=meta.namespace,
        uid=meta.uid,
        labels=meta.labels,
        annotations=meta.annotations,
        owner_references=map_list(metadata, "ownerReferences", "metadata", owner_reference),
        access_modes=spec.access_modes,
        request=spec.request,
        storage_class_name=spec.storage_class_name,
        volume_name=spec.volume_name,
        selector=spec.selector,
        volume_mode=spec.volume_mode,
        volume_attributes_class_name=spec.volume_attributes_class_name,
        phase=phase,
        creation_timestamp=meta.creation_timestamp,
        deletion_timestamp=opt_time(metadata, "deletionTimestamp", "metadata"),
    )
    return pvc, meta.annotations


def _one_source(raw: Raw, path: str, sources: tuple[str, ...]) -> str:
    """The single volume source set in ``raw`` (validateVolumeSource's rules)."""
    found = ""
    for key in sources:
        if raw.get(key) is None:
            continue
        if found:
            raise fail(child(path, key), forbidden(ONE_VOLUME_TYPE))
        found = key
    if not found:
        raise fail(path, required(MUST_SPECIFY_TYPE))
    return found


def convert_pv(raw: Raw) -> tuple[PersistentVolume, dict[str, str]]:
    """A PersistentVolume (core/v1)."""
    meta = read_meta(raw, namespaced=False)
    check_dns_subdomain(meta.name, "metadata.name")
    metadata = get_map(raw, "metadata", "")
    spec = get_map(raw, "spec", "")
    capacity = _storage_amount(spec, "capacity", "spec")
    if capacity is None:
        raise fail(f"spec.capacity.{STORAGE}", required())
    source = _one_source(spec, "spec", PV_SOURCES)
    driver = handle = disk = ""
    if source == CSI_SOURCE:
        csi = get_map(spec, CSI_SOURCE, "spec")
        driver = req_str(csi, "driver", "spec.csi")
        handle = req_str(csi, "volumeHandle", "spec.csi")
    elif source in (GCE_PD_SOURCE, AWS_EBS_SOURCE):
        disk = req_str(get_map(spec, source, "spec"), DISK_FIELDS[source], f"spec.{source}")
    affinity = get_map(spec, "nodeAffinity", "spec")
    node_affinity = None
    req = affinity.get("required")
    if req is not None:
        rp = "spec.nodeAffinity.required"
        node_affinity = node_selector(as_map(req, rp), rp)
    claim_ref = None
    ref = spec.get("claimRef")
    if ref is not None:
        rr = as_map(ref, "spec.claimRef")
        claim_ref = ClaimReference(
            namespace=get_str(rr, "namespace", "spec.claimRef") or "default",
            name=req_str(rr, "name", "spec.claimRef"),
            uid=get_str(rr, "uid", "spec.claimRef"),
        )
    status = get_map(raw, "status", "")
    pv = PersistentVolume(
        name=meta.name,
        uid=meta.uid,
        labels=meta.labels,
        annotations=meta.annotations,
        capacity=capacity,
        access_modes=_access_modes(spec, "spec"),
        storage_class_name=_class_name(spec, "spec") or "",
        volume_mode=_volume_mode(spec, "spec"),
        node_affinity=node_affinity,
        claim_ref=claim_ref,
        reclaim_policy=opt_enum(spec, "persistentVolumeReclaimPolicy", "spec", RECLAIM_POLICIES)
        or RECLAIM_RETAIN,
        volume_attributes_class_name=get_str(spec, "volumeAttributesClassName", "spec"),
        source=source,
        csi_driver=driver,
        volume_handle=handle,
        disk=disk,
        phase=opt_enum(status, "phase", "status", VOLUME_PHASES) or VOLUME_PENDING,
        creation_timestamp=meta.creation_timestamp,
        deletion_timestamp=opt_time(metadata, "deletionTimestamp", "metadata"),
    )
    return pv, meta.annotations


def _topology_requirement(raw: Raw, path: str) -> TopologySelectorRequirement:
    values = get_str_list(raw, "values", path)
    if not values:
        raise fail(child(path, "values"), required())
    return TopologySelectorRequirement(req_str(raw, "key", path), values)


def _topology_term(raw: Raw, path: str) -> TopologySelectorTerm:
    exprs = map_list(raw, "matchLabelExpressions", path, _topology_requirement)
    if not exprs:
        raise fail(child(path, "matchLabelExpressions"), required())
    return TopologySelectorTerm(exprs)


def convert_storage_class(raw: Raw) -> tuple[StorageClass, dict[str, str]]:
    """A StorageClass (storage.k8s.io/v1): its fields are top-level, not under ``spec``."""
    meta = read_meta(raw, namespaced=False)
    check_dns_subdomain(meta.name, "metadata.name")
    sc = StorageClass(
        name=meta.name,
        provisioner=req_str(raw, "provisioner", ""),
        volume_binding_mode=opt_enum(raw, "volumeBindingMode", "", BINDING_MODES) or IMMEDIATE,
        allowed_topologies=map_list(raw, "allowedTopologies", "", _topology_term),
        reclaim_policy=opt_enum(raw, "reclaimPolicy", "", (RECLAIM_DELETE, RECLAIM_RETAIN))
        or RECLAIM_DELETE,
        uid=meta.uid,
        labels=meta.labels,
        annotations=meta.annotations,
        creation_timestamp=meta.creation_timestamp,
    )
    return sc, meta.annotations


def _csi_node_driver(raw: Raw, path: str) -> CSINodeDriver:
    count = opt_int(get_map(raw, "allocatable", path), "count", child(path, "allocatable"), bits=32)
    if count is not None and count < 0:
        raise fail(
            child(child(path, "allocatable"), "count"),
            invalid(count, "must be greater than or equal to 0"),
        )
    return CSINodeDriver(
        name=req_str(raw, "name", path),
        node_id=get_str(raw, "nodeID", path),
        topology_keys=get_str_list(raw, "topologyKeys", path),
        allocatable_count=count,
    )


def convert_csi_node(raw: Raw) -> tuple[CSINode, dict[str, str]]:
    """A CSINode (storage.k8s.io/v1), named after its node."""
    meta = read_meta(raw, namespaced=False)
    check_dns_subdomain(meta.name, "metadata.name")
    spec = get_map(raw, "spec", "")
    drivers = map_list(spec, "drivers", "spec", _csi_node_driver)
    seen: set[str] = set()
    for i, d in enumerate(drivers):
        if d.name in seen:
            raise fail(f"spec.drivers[{i}].name", f"Duplicate value: {quote(d.name)}")
        seen.add(d.name)
    return CSINode(meta.name, uid=meta.uid, annotations=meta.annotations, drivers=drivers), (
        meta.annotations
    )


# --------------------------------------------------------------------------- pod volumes


def _pod_volume(raw: Raw, path: str) -> PodVolume:
    name = req_str(raw, "name", path)
    check_dns_label(name, child(path, "name"))
    source = _one_source(raw, path, POD_VOLUME_SOURCES)
    sp = child(path, source)
    body = as_map(raw.get(source), sp)
    read_only = get_bool(body, "readOnly", sp)
    if source == PVC_SOURCE:
        return PodVolume(
            name, source, claim_name=req_str(body, "claimName", sp), read_only=read_only
        )
    if source == EPHEMERAL_SOURCE:
        tp = child(sp, "volumeClaimTemplate")
        template = body.get("volumeClaimTemplate")
        if template is None:
            raise fail(tp, required())
        traw = as_map(template, tp)
        tmeta = get_map(traw, "metadata", tp)
        spec = traw.get("spec")
        if spec is None:
            raise fail(child(tp, "spec"), required())
        claim = claim_spec(as_map(spec, child(tp, "spec")), child(tp, "spec"))
        claim = replace(
            claim,
            labels=get_str_map(tmeta, "labels", child(tp, "metadata")),
            annotations=get_str_map(tmeta, "annotations", child(tp, "metadata")),
        )
        return PodVolume(name, source, template=claim)
    if source in DISK_FIELDS:
        disk = req_str(body, DISK_FIELDS[source], sp)
        return PodVolume(name, source, disk=disk, read_only=read_only)
    if source == RBD_SOURCE:
        monitors = get_str_list(body, "monitors", sp)
        if not monitors:
            raise fail(child(sp, "monitors"), required())
        rbd = RBDImage(monitors, get_str(body, "pool", sp) or "rbd", req_str(body, "image", sp))
        return PodVolume(name, source, rbd=rbd, read_only=read_only)
    if source == CSI_SOURCE:
        return PodVolume(name, source, csi_driver=req_str(body, "driver", sp), read_only=read_only)
    return PodVolume(name, source, read_only=read_only)


def pod_volumes(raw: Raw, path: str) -> tuple[PodVolume, ...]:
    """``spec.volumes`` of a pod spec: names unique DNS labels, one source each."""
    items = get_list(raw, "volumes", path)
    p = child(path, "volumes")
    out: list[PodVolume] = []
    seen: set[str] = set()
    for i, item in enumerate(items):
        ip = f"{p}[{i}]"
        vol = _pod_volume(as_map(item, ip), ip)
        if vol.name in seen:
            raise fail(child(ip, "name"), f"Duplicate value: {quote(vol.name)}")
        seen.add(vol.name)
        out.append(vol)
    return tuple(out)


StorageObject = PersistentVolumeClaim | PersistentVolume | StorageClass | CSINode

CONVERTERS: Final[dict[str, Any]] = {
    "PersistentVolumeClaim": convert_pvc,
    "PersistentVolume": convert_pv,
    "StorageClass": convert_storage_class,
    "CSINode": convert_csi_node,
}
"""kind -> converter ``raw -> (object, annotations)``."""

KINDS: Final = {
    "PersistentVolumeClaim": ("", ("v1",)),
    "PersistentVolume": ("", ("v1",)),
    "StorageClass": ("storage.k8s.io", ("v1",)),
    "CSINode": ("storage.k8s.io", ("v1",)),
}
"""The storage kinds acted on: kind -> (API group, served versions)."""

CLUSTER_SCOPED: Final = frozenset({"PersistentVolume", "StorageClass", "CSINode"})


def convert_storage_object(kind: str, raw: Raw) -> tuple[StorageObject, dict[str, str]]:
    """Convert one object of a kind of ``KINDS``."""
    out: tuple[StorageObject, dict[str, str]] = CONVERTERS[kind](raw)
    return out
