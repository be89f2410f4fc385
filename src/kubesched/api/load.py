"""Reading Kubernetes YAML/JSON input and turning it into typed objects.

Two steps, both raising only :class:`InputError` for bad input:

- :func:`read_documents` reads ``-f`` arguments (simulate-interface.md): a file, a
  directory (its ``*.yaml``, ``*.yml``, ``*.json`` by name, not recursive) or
  ``-``. A stream starting with ``{`` is JSON (concatenated objects), anything
  else multi-document YAML. Empty documents are skipped; ``List`` and ``*List``
  kinds are unpacked in order, items of a typed list taking its kind and
  apiVersion when they have none. Input is capped (``input_limits.py``).
- :func:`load_objects` converts each document by kind (``convert/``) in input
  order, validates what the API server would (``meta_validation.py``), counts
  kinds it does not act on and skips pods with resource claims.

Nothing is admitted here: the caller admits each pod when it is created
(``kubesched.sim.priority_classes``). Timestamps are Unix-epoch nanoseconds.
"""

from __future__ import annotations

import os
import sys
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Generic, TextIO, TypeVar

from kubesched.api import convert, sim_annotations
from kubesched.api.admission import priority_class_errors
from kubesched.api.convert import Workload, workloads
from kubesched.api.convert import storage as convert_storage
from kubesched.api.errors import InputError
from kubesched.api.input_limits import (
    DEFAULT_LIMITS,
    InputLimits,
    ReadBudget,
    read_file,
    read_stream,
    too_many,
)
from kubesched.api.meta_validation import validate_object
from kubesched.api.parsing import JSONValueError, one_line, parse_json_stream, parse_yaml
from kubesched.api.storage import PersistentVolumeClaim
from kubesched.api.types import Namespace, Node, Pod, PodDisruptionBudget, PriorityClass
from kubesched.api.unmodelled import is_unmodelled

__all__ = [
    "Document",
    "LoadResult",
    "Loaded",
    "Workload",
    "load_objects",
    "read_documents",
]

STDIN: Final = "-"
STDIN_SOURCE: Final = "<stdin>"
EXTENSIONS: Final = (".yaml", ".yml", ".json")
_MAX_LIST_DEPTH: Final = 16

# --------------------------------------------------------------------------- reading


@dataclass(frozen=True, slots=True)
class Document:
    """One object of the input: ``source`` is the file path (or ``<stdin>``), ``index``
    its 0-based position among the objects read from that source (after skipping
    empty documents and unpacking Lists), ``raw`` the parsed mapping."""

    source: str
    index: int
    raw: Mapping[str, Any]


def parse_text(text: str, source: str) -> list[Any]:
    """The documents of one input, as parsed values (None for an empty YAML document)."""
    if text.lstrip().startswith("{"):
        try:
            return parse_json_stream(text, source)
        except JSONValueError:
            raise
        except InputError as json_err:
            # A YAML flow mapping also starts with "{": accept it if it parses as YAML.
            try:
                return parse_yaml(text, source)
            except InputError:
                raise json_err from None
    return parse_yaml(text, source)


def _item_defaults(value: Mapping[str, Any], kind: str) -> dict[str, str]:
    """What the items of a typed list lack: the API returns ``PodList`` items
    without ``kind``/``apiVersion`` (the list's kind and version are theirs)."""
    if kind == "List":
        return {}
    defaults = {"kind": kind.removesuffix("List")}
    api_version = value.get("apiVersion")
    if isinstance(api_version, str):
        defaults["apiVersion"] = api_version
    return defaults


def _with_defaults(item: Any, defaults: Mapping[str, str]) -> Any:
    if not defaults or not isinstance(item, Mapping):
        return item
    missing = {k: v for k, v in defaults.items() if item.get(k) is None}
    if not missing:
        return item
    return {**missing, **{k: v for k, v in item.items() if k not in missing}}


def _unpack(
    value: Any, source: str, out: list[Document], cap: int, limits: InputLimits, depth: int = 0
) -> None:
    if value is None:
        return
    if not isinstance(value, Mapping):
        raise InputError(
            f"expected a mapping at the top level, got {convert.type_name(value)}",
            source=source,
        )
    kind = value.get("kind")
    if isinstance(kind, str) and kind.endswith("List") and depth < _MAX_LIST_DEPTH:
        items = value.get("items")
        if items is None:
            return
        if not isinstance(items, list):
            raise InputError(
                f"expected a list, got {convert.type_name(items)}",
                source=source,
                obj=kind,
                field="items",
            )
        defaults = _item_defaults(value, kind)
        for item in items:
            _unpack(_with_defaults(item, defaults), source, out, cap, limits, depth + 1)
        return
    if len(out) >= cap:
        raise InputError(too_many(limits), source=source)
    out.append(Document(source=source, index=len(out), raw=value))


def documents_from_text(
    text: str, source: str, *, limits: InputLimits = DEFAULT_LIMITS, read_before: int = 0
) -> list[Document]:
    """The objects of one input's text, Lists unpacked, empty documents skipped;
    at most ``limits.max_objects - read_before`` of them."""
    out: list[Document] = []
    cap = limits.max_objects - read_before
    for value in parse_text(text, source):
        _unpack(value, source, out, cap, limits)
    return out


def _expand(path: str) -> list[str]:
    if path == STDIN:
        return [STDIN]
    if os.path.isdir(path):
        try:
            names = sorted(os.listdir(path))
        except OSError as err:
            raise InputError(one_line(err.strerror or str(err)), source=path) from None
        return [
            os.path.join(path, n)
            for n in names
            if n.endswith(EXTENSIONS) and os.path.isfile(os.path.join(path, n))
        ]
    if not os.path.exists(path):
        raise InputError("no such file or directory", source=path)
    return [path]


def read_documents(
    paths: Sequence[str], stdin: TextIO | None = None, *, limits: InputLimits = DEFAULT_LIMITS
) -> list[Document]:
    """All objects of the ``-f`` arguments, in order. ``-`` reads ``stdin`` (default
    ``sys.stdin``) once; a second ``-`` reads nothing more. ``limits`` caps the bytes
    read from all of them and the objects found (``kubesched.api.input_limits``)."""
    out: list[Document] = []
    budget = ReadBudget(limits)
    stdin_read = False
    for path in paths:
        for file in _expand(path):
            if file == STDIN:
                if stdin_read:
                    continue
                stdin_read = True
                stream = stdin if stdin is not None else sys.stdin
                text = read_stream(stream, STDIN_SOURCE, budget)
                source = STDIN_SOURCE
            else:
                text = read_file(file, budget)
                source = file
            out.extend(documents_from_text(text, source, limits=limits, read_before=len(out)))
    return out


# --------------------------------------------------------------------------- converting

T = TypeVar("T")

LoadedObject = (
    Pod
    | Node
    | PriorityClass
    | PodDisruptionBudget
    | Namespace
    | Workload
    | convert_storage.StorageObject
    | dict[str, Any]
)


@dataclass(frozen=True, slots=True)
class Loaded(Generic[T]):
    """One converted object, in input order. ``annotations`` are the object's own
    (``kubesched.io/create-at`` ...); ``spec_priority``/``spec_preemption_policy``
    are a Pod's ``spec.priority``/``spec.preemptionPolicy`` as written (None when
    absent, and for other kinds), which admission needs."""

    kind: str
    obj: T
    annotations: Mapping[str, str]
    source: str
    index: int
    spec_priority: int | None = None
    spec_preemption_policy: str | None = None

    @property
    def where(self) -> str:
        return f"{self.source} (object {self.index})"


@dataclass(slots=True)
class LoadResult:
    """The converted objects in input order; ``ignored`` counts the kinds we do not act
    on, ``unmodelled`` those of them that can change scheduling, ``skipped_claims``
    names the objects skipped for their resource claims (``pod default/a``)."""

    objects: list[Loaded[LoadedObject]] = field(default_factory=list)
    ignored: Counter[str] = field(default_factory=Counter)
    unmodelled: Counter[str] = field(default_factory=Counter)
    skipped_claims: list[str] = field(default_factory=list)

    def of_type(self, cls: type[T]) -> list[Loaded[T]]:
        """The loaded objects whose ``obj`` is a ``cls``, in input order."""
        return [o for o in self.objects if isinstance(o.obj, cls)]  # type: ignore[misc]

    def of_kind(self, kind: str) -> list[Loaded[LoadedObject]]:
        return [o for o in self.objects if o.kind == kind]


# kind -> (API group, served versions)
KINDS: Final[Mapping[str, tuple[str, tuple[str, ...]]]] = {
    "Pod": ("", ("v1",)),
    "Node": ("", ("v1",)),
    "Namespace": ("", ("v1",)),
    "PriorityClass": ("scheduling.k8s.io", ("v1",)),
    "PodDisruptionBudget": ("policy", ("v1",)),
    "Deployment": ("apps", ("v1",)),
    "ReplicaSet": ("apps", ("v1",)),
    "StatefulSet": ("apps", ("v1",)),
    "DaemonSet": ("apps", ("v1",)),
    "Job": ("batch", ("v1",)),
    "CronJob": ("batch", ("v1",)),
    "KubeSchedulerConfiguration": ("kubescheduler.config.k8s.io", ("v1",)),
    **convert_storage.KINDS,
}
CLUSTER_SCOPED: Final = frozenset(
    {"Node", "Namespace", "PriorityClass", *convert_storage.CLUSTER_SCOPED}
)
# kind -> API groups that served it once and no longer do (extensions/v1beta1 went
# in v1.16): an object of such a version is refused as kubectl refuses it.
REMOVED_GROUPS: Final[Mapping[str, tuple[str, ...]]] = {
    "Deployment": ("extensions",),
    "ReplicaSet": ("extensions",),
    "DaemonSet": ("extensions",),
}


def _obj_label(kind: str, raw: Mapping[str, Any], index: int) -> str:
    ns, name = convert.object_name(raw)
    if kind in CLUSTER_SCOPED:
        ident = name
    elif kind == "KubeSchedulerConfiguration":
        ident = ""
    elif kind not in KINDS:
        ident = f"{ns}/{name}" if ns and name else name  # scope unknown: as written
    else:
        ident = f"{ns or 'default'}/{name}" if name else ""
    return f"{kind.lower()} {ident}" if ident else f"{kind.lower()} #{index}"


def _label_of(raw: Mapping[str, Any], index: int) -> str:
    """The object's label before its kind is known to be good."""
    kind = raw.get("kind")
    if isinstance(kind, str) and kind:
        return _obj_label(kind, raw, index)
    return f"object #{index}"


def _kind_of(raw: Mapping[str, Any]) -> tuple[str | None, str, str]:
    """(kind we act on or None, the name to count it under when ignored, API group).

    As kubectl validates before sending: a missing ``apiVersion`` or ``kind`` is
    ``error validating data: apiVersion not set``; a version no longer served is
    ``no matches for kind "Deployment" in version "extensions/v1beta1"``."""
    kind = raw.get("kind")
    api_version = raw.get("apiVersion")
    unset = [f"{key} not set" for key, v in (("apiVersion", api_version), ("kind", kind)) if not v]
    if unset:
        detail = unset[0] if len(unset) == 1 else "[" + ", ".join(unset) + "]"
        raise InputError(f"error validating data: {detail}")
    if not isinstance(kind, str):
        raise InputError(f"expected a string, got {convert.describe(kind)}", field="kind")
    if not isinstance(api_version, str):
        raise InputError(
            f"expected a string, got {convert.describe(api_version)}", field="apiVersion"
        )
    group, _, version = api_version.rpartition("/")
    known = KINDS.get(kind)
    if known is None:
        return None, kind, group
    no_match = f'no matches for kind "{kind}" in version "{api_version}"'
    if group != known[0]:
        if group in REMOVED_GROUPS.get(kind, ()):
            raise InputError(no_match, field="apiVersion")
        # someone else's kind of that name
        return None, f"{kind}.{group}" if group else kind, group
    if version not in known[1]:
        raise InputError(no_match, field="apiVersion")
    return kind, kind, group


def _convert(kind: str, raw: Mapping[str, Any], doc: Document) -> Loaded[LoadedObject]:
    def loaded(obj: LoadedObject, annotations: Mapping[str, str]) -> Loaded[LoadedObject]:
        return Loaded(kind, obj, annotations, doc.source, doc.index)

    if kind == "Pod":
        pod, prio, policy = convert.convert_pod(raw)
        return Loaded(kind, pod, pod.annotations, doc.source, doc.index, prio, policy)
    if kind == "Node":
        return loaded(*convert.convert_node(raw))
    if kind == "PriorityClass":
        pc, annotations = convert.convert_priority_class(raw)
        errs = priority_class_errors(pc)
        if errs:
            raise InputError(errs[0][1], field=errs[0][0])
        return loaded(pc, annotations)
    if kind == "PodDisruptionBudget":
        return loaded(*convert.convert_pdb(raw))
    if kind == "Namespace":
        return loaded(*convert.convert_namespace(raw))
    if kind in workloads.KINDS:
        return loaded(*workloads.convert_workload(raw, kind))
    if kind in convert_storage.KINDS:
        return loaded(*convert_storage.convert_storage_object(kind, raw))
    # KubeSchedulerConfiguration: kept raw for kubesched.scheduler.config.
    return loaded(dict(raw), {})


def _identity(kind: str, obj: LoadedObject) -> tuple[str, str, str]:
    if isinstance(obj, Pod | PodDisruptionBudget | Workload | PersistentVolumeClaim):
        return kind, obj.namespace, obj.name
    if not isinstance(obj, dict):
        return kind, "", obj.name
    return kind, "", ""  # the scheduler configuration is a singleton


def _check_converted(kind: str, raw: Mapping[str, Any], item: Loaded[LoadedObject]) -> None:
    """What the API server would still refuse in a converted object, and simulation
    annotations we do not know (``kubesched.api.sim_annotations``)."""
    if kind != "KubeSchedulerConfiguration":
        validate_object(kind, raw)
    bad = sim_annotations.unknown(item.annotations)
    if bad is not None:
        raise InputError(
            sim_annotations.unknown_message(bad), field=f'metadata.annotations["{bad}"]'
        )
    obj = item.obj
    bad = sim_annotations.unknown(obj.template_annotations) if isinstance(obj, Workload) else None
    if bad is not None:
        raise InputError(
            sim_annotations.unknown_message(bad),
            field=f'spec.template.metadata.annotations["{bad}"]',
        )


def _has_claims(raw: Mapping[str, Any]) -> bool:
    """Whether a pod (or a workload's pod template) has ``spec.resourceClaims``."""
    spec = raw.get("spec")
    if not isinstance(spec, Mapping):
        return False
    template = spec.get("template")
    if isinstance(template, Mapping) and isinstance(template.get("spec"), Mapping):
        spec = template["spec"]
    return bool(spec.get("resourceClaims"))


def _pods_made(obj: LoadedObject) -> int:
    """The pods a workload object asks for (its ``replicas``); 0 for other objects."""
    return max(obj.replicas, 0) if isinstance(obj, Workload) else 0


def load_objects(docs: Iterable[Document], *, limits: InputLimits = DEFAULT_LIMITS) -> LoadResult:
    """Convert documents into typed objects, in input order.

    Raises :class:`InputError` (``source``, ``obj`` like ``pod default/web-1``,
    ``field``) for the first bad value, a missing ``apiVersion`` or ``kind``, an
    unserved apiVersion of a kind we act on, an unknown ``kubesched.io/`` annotation,
    a second object of the same kind and name (PriorityClasses excepted: they have
    lifetimes), or more than ``limits.max_objects`` objects counting workloads'
    ``replicas``. Pods and workloads with resource claims are checked, then skipped.
    """
    result = LoadResult()
    first_seen: dict[tuple[str, str, str], Loaded[LoadedObject]] = {}
    made = 0
    for doc in docs:
        raw = doc.raw
        if not isinstance(raw, Mapping):
            raise InputError(
                f"expected a mapping at the top level, got {convert.type_name(raw)}",
                source=doc.source,
            )
        made += 1
        if made > limits.max_objects:
            raise InputError(too_many(limits), source=doc.source)
        try:
            kind, counted, group = _kind_of(raw)
        except InputError as err:
            raise err.with_context(source=doc.source, obj=_label_of(raw, doc.index)) from None
        if kind is None:
            if is_unmodelled(counted, group):
                result.unmodelled[counted] += 1
            else:
                result.ignored[counted] += 1
            continue
        label = _obj_label(kind, raw, doc.index)
        try:
            item = _convert(kind, raw, doc)
            _check_converted(kind, raw, item)
        except InputError as err:
            raise err.with_context(source=doc.source, obj=label) from None
        if _has_claims(raw):
            result.skipped_claims.append(label)
            continue
        ident = _identity(kind, item.obj)
        previous = first_seen.get(ident)
        if previous is not None and not isinstance(item.obj, PriorityClass):
            # (PriorityClasses have lifetimes: a name may be deleted and created
            # again; the scenario's class timeline rejects overlapping ones.)
            raise InputError(
                f"defined twice: first in {previous.where}, again in {item.where}",
                source=doc.source,
                obj=label,
            )
        pods = _pods_made(item.obj)
        made += pods
        if made > limits.max_objects:
            raise InputError(
                f"{pods} replicas would make {too_many(limits)}",
                source=doc.source,
                obj=label,
                field="spec.replicas",
            )
        first_seen[ident] = item
        result.objects.append(item)
    return result
