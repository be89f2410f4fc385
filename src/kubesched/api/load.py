"""Reading Kubernetes YAML/JSON input and turning it into typed objects.

Two steps, both raising only :class:`InputError` for bad input:

- :func:`read_documents` reads ``-f`` arguments (simulate-interface.md): a file, a
  directory (its ``*.yaml``, ``*.yml``, ``*.json``, sorted by name, not
  recursive) or ``-`` for stdin. A stream starting with ``{`` is read as JSON
  (one or more concatenated objects), anything else as multi-document YAML.
  Empty documents are skipped; ``kind: List`` and ``*List`` kinds are unpacked
  in order.
- :func:`load_objects` converts each document by kind (``convert.py``), in input
  order, counting kinds it does not act on in ``LoadResult.ignored``.

Nothing here is admitted yet: the caller admits each pod when it is created,
against the PriorityClasses that exist then (``kubesched.sim.priority_classes``,
with ``Loaded.spec_priority``/``spec_preemption_policy``). Timestamps are nanoseconds since the
Unix epoch, not rebased onto a run's clock.
"""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Generic, TextIO, TypeVar

import yaml

from kubesched.api import convert, workloads
from kubesched.api.admission import priority_class_errors
from kubesched.api.convert import Workload
from kubesched.api.errors import InputError
from kubesched.api.types import Namespace, Node, Pod, PodDisruptionBudget, PriorityClass

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

    @property
    def where(self) -> str:
        return f"{self.source} (object {self.index})"


_YAML_BASE: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_TAG: Final = "tag:yaml.org,2002:"
_STR_TAG: Final = _TAG + "str"
_MAP_TAG: Final = _TAG + "map"
_SEQ_TAG: Final = _TAG + "seq"
_MERGE_TAG: Final = _TAG + "merge"
_TIMESTAMP_TAG: Final = _TAG + "timestamp"


class _Loader(_YAML_BASE):  # type: ignore[misc]
    """Safe YAML loading as Kubernetes reads it: timestamps stay strings (they are
    converted where a field is a time) and a repeated mapping key is an error.

    ``load_documents`` builds plain dicts, lists and scalars straight from the
    composed nodes (PyYAML's generic constructor is most of the parse time) and
    falls back to the safe constructor for anything unusual (merge keys, explicit
    tags such as ``!!set``)."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._plain_tags: dict[str, str] = {}

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        # The tag of a plain scalar depends only on its text (we have no path
        # resolvers), and input repeats the same texts ("c", "100m") endlessly.
        if kind is yaml.ScalarNode and implicit[0]:
            tag = self._plain_tags.get(value)
            if tag is None:
                tag = super().resolve(kind, value, implicit)
                if len(self._plain_tags) < 65536:
                    self._plain_tags[value] = tag
            return tag
        return super().resolve(kind, value, implicit)

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        self._check_duplicate_keys(node, lambda n: self.construct_object(n, deep=deep))
        return super().construct_mapping(node, deep=deep)

    @staticmethod
    def _check_duplicate_keys(node: Any, build: Any) -> None:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if key_node.tag == _MERGE_TAG:
                continue
            key = build(key_node)
            try:
                duplicate = key in seen
                seen.add(key)
            except TypeError:
                continue  # unhashable: the constructor reports it
            if duplicate:
                raise yaml.constructor.ConstructorError(
                    None, None, f"mapping key {key!r} already defined", key_node.start_mark
                )

    def _build(self, node: Any, memo: dict[int, Any]) -> Any:
        tag = node.tag
        if tag == _STR_TAG:
            return node.value
        built = memo.get(id(node))
        if built is not None:
            return built  # an alias: share the object, as PyYAML does
        if tag == _MAP_TAG and not any(k.tag == _MERGE_TAG for k, _ in node.value):
            out: dict[Any, Any] = {}
            memo[id(node)] = out
            for key_node, value_node in node.value:
                key = self._build(key_node, memo)
                try:
                    duplicate = key in out
                except TypeError:
                    raise yaml.constructor.ConstructorError(
                        "while constructing a mapping",
                        node.start_mark,
                        "found unhashable key",
                        key_node.start_mark,
                    ) from None
                if duplicate:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"mapping key {key!r} already defined", key_node.start_mark
                    )
                out[key] = self._build(value_node, memo)
            return out
        if tag == _SEQ_TAG:
            items: list[Any] = []
            memo[id(node)] = items
            items.extend(self._build(child, memo) for child in node.value)
            return items
        if isinstance(node, yaml.ScalarNode) and tag in self.yaml_constructors:
            return self.yaml_constructors[tag](self, node)
        return self.construct_document(node)  # merge keys, !!set, !!omap, ...

    def load_documents(self) -> Iterator[Any]:
        try:
            while self.check_node():
                yield self._build(self.get_node(), {})
        finally:
            self.dispose()


_Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != _TIMESTAMP_TAG]
    for first, resolvers in _YAML_BASE.yaml_implicit_resolvers.items()
}


def _parse_yaml(text: str, source: str) -> list[Any]:
    try:
        return list(_Loader(text).load_documents())
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        problem = err.problem or err.context or "invalid YAML"
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
        raise InputError(f"malformed YAML: {where}{problem}", source=source) from None
    except (yaml.YAMLError, ValueError, TypeError, OverflowError, RecursionError) as err:
        raise InputError(f"malformed YAML: {_one_line(str(err))}", source=source) from None


def _parse_json_stream(text: str, source: str) -> list[Any]:
    decoder = json.JSONDecoder()
    out: list[Any] = []
    pos = 0
    try:
        while True:
            while pos < len(text) and text[pos].isspace():
                pos += 1
            if pos >= len(text):
                return out
            value, pos = decoder.raw_decode(text, pos)
            out.append(value)
    except json.JSONDecodeError as err:
        raise InputError(
            f"malformed JSON: line {err.lineno}, column {err.colno}: {err.msg}", source=source
        ) from None
    except RecursionError:
        raise InputError("malformed JSON: nested too deeply", source=source) from None


def _one_line(text: str) -> str:
    return " ".join(text.split())


def parse_text(text: str, source: str) -> list[Any]:
    """The documents of one input, as parsed values (None for an empty YAML document)."""
    if text.lstrip().startswith("{"):
        try:
            return _parse_json_stream(text, source)
        except InputError as json_err:
            # A YAML flow mapping also starts with "{": accept it if it parses as YAML.
            try:
                return _parse_yaml(text, source)
            except InputError:
                raise json_err from None
    return _parse_yaml(text, source)


def _unpack(value: Any, source: str, out: list[Document], depth: int = 0) -> None:
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
        for item in items:
            _unpack(item, source, out, depth + 1)
        return
    out.append(Document(source=source, index=len(out), raw=value))


def documents_from_text(text: str, source: str) -> list[Document]:
    """The objects of one input's text, Lists unpacked, empty documents skipped."""
    out: list[Document] = []
    for value in parse_text(text, source):
        _unpack(value, source, out)
    return out


def _read_file(path: str) -> str:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise InputError("no such file or directory", source=path) from None
    except IsADirectoryError:
        raise InputError("is a directory", source=path) from None
    except PermissionError:
        raise InputError("permission denied", source=path) from None
    except OSError as err:
        raise InputError(_one_line(err.strerror or str(err)), source=path) from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise InputError(
            f"not UTF-8 text: invalid byte at offset {err.start}", source=path
        ) from None


def _expand(path: str) -> list[str]:
    if path == STDIN:
        return [STDIN]
    if os.path.isdir(path):
        try:
            names = sorted(os.listdir(path))
        except OSError as err:
            raise InputError(_one_line(err.strerror or str(err)), source=path) from None
        return [
            os.path.join(path, n)
            for n in names
            if n.endswith(EXTENSIONS) and os.path.isfile(os.path.join(path, n))
        ]
    if not os.path.exists(path):
        raise InputError("no such file or directory", source=path)
    return [path]


def read_documents(paths: Sequence[str], stdin: TextIO | None = None) -> list[Document]:
    """All objects of the ``-f`` arguments, in order. ``-`` reads ``stdin`` (default
    ``sys.stdin``) once; a second ``-`` reads nothing more."""
    out: list[Document] = []
    stdin_read = False
    for path in paths:
        for file in _expand(path):
            if file == STDIN:
                if stdin_read:
                    continue
                stdin_read = True
                stream = stdin if stdin is not None else sys.stdin
                try:
                    text = stream.read()
                except (OSError, UnicodeDecodeError) as err:
                    raise InputError(_one_line(str(err)), source=STDIN_SOURCE) from None
                out.extend(documents_from_text(text, STDIN_SOURCE))
            else:
                out.extend(documents_from_text(_read_file(file), file))
    return out


# --------------------------------------------------------------------------- converting

T = TypeVar("T")

LoadedObject = (
    Pod | Node | PriorityClass | PodDisruptionBudget | Namespace | Workload | dict[str, Any]
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
    objects: list[Loaded[LoadedObject]] = field(default_factory=list)
    ignored: Counter[str] = field(default_factory=Counter)

    def of_type(self, cls: type[T]) -> list[Loaded[T]]:
        """The loaded objects whose ``obj`` is a ``cls``, in input order."""
        return [o for o in self.objects if isinstance(o.obj, cls)]  # type: ignore[misc]

    def of_kind(self, kind: str) -> list[Loaded[LoadedObject]]:
        return [o for o in self.objects if o.kind == kind]

    def ignored_summary(self) -> str:
        """``ignored 3 objects: 2 Service, 1 ConfigMap`` (most first), or ""."""
        if not self.ignored:
            return ""
        total = sum(self.ignored.values())
        parts = ", ".join(
            f"{n} {k}" for k, n in sorted(self.ignored.items(), key=lambda kv: (-kv[1], kv[0]))
        )
        return f"ignored {total} objects: {parts}"


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
}
CLUSTER_SCOPED: Final = frozenset({"Node", "Namespace", "PriorityClass"})


def _obj_label(kind: str, raw: Mapping[str, Any], index: int) -> str:
    ns, name = convert.object_name(raw)
    if kind in CLUSTER_SCOPED:
        ident = name
    elif kind == "KubeSchedulerConfiguration":
        ident = ""
    else:
        ident = f"{ns or 'default'}/{name}" if name else ""
    return f"{kind.lower()} {ident}" if ident else f"{kind.lower()} #{index}"


def _kind_of(raw: Mapping[str, Any]) -> tuple[str | None, str]:
    """(kind we act on or None, the name to count it under when ignored)."""
    kind = raw.get("kind")
    if not isinstance(kind, str) or not kind:
        raise InputError(convert.required(), field="kind")
    api_version = raw.get("apiVersion")
    if api_version is None:
        return (kind if kind in KINDS else None), kind
    if not isinstance(api_version, str):
        raise InputError(
            f"expected a string, got {convert.describe(api_version)}", field="apiVersion"
        )
    group, _, version = api_version.rpartition("/")
    known = KINDS.get(kind)
    if known is None:
        return None, kind
    if group != known[0]:
        return None, f"{kind}.{group}" if group else kind  # someone else's kind of that name
    if version not in known[1]:
        raise InputError(
            f'no matches for kind "{kind}" in version "{api_version}"', field="apiVersion"
        )
    return kind, kind


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
    # KubeSchedulerConfiguration: kept raw for kubesched.scheduler.config.
    return loaded(dict(raw), {})


def _identity(kind: str, obj: LoadedObject) -> tuple[str, str, str]:
    if isinstance(obj, Pod | PodDisruptionBudget | Workload):
        return kind, obj.namespace, obj.name
    if isinstance(obj, Node | PriorityClass | Namespace):
        return kind, "", obj.name
    return kind, "", ""  # the scheduler configuration is a singleton


def load_objects(docs: Iterable[Document]) -> LoadResult:
    """Convert documents into typed objects, in input order.

    Raises :class:`InputError` (with ``source``, ``obj`` like ``pod default/web-1``
    and ``field``) for the first bad value, an unserved apiVersion of a kind we act
    on, or a second object of the same kind and name (same namespace for
    namespaced kinds; PriorityClasses excepted, see ``kubesched.sim.priority_classes``).
    """
    result = LoadResult()
    first_seen: dict[tuple[str, str, str], Loaded[LoadedObject]] = {}
    for doc in docs:
        raw = doc.raw
        if not isinstance(raw, Mapping):
            raise InputError(
                f"expected a mapping at the top level, got {convert.type_name(raw)}",
                source=doc.source,
            )
        try:
            kind, counted = _kind_of(raw)
        except InputError as err:
            raise err.with_context(source=doc.source) from None
        if kind is None:
            result.ignored[counted] += 1
            continue
        label = _obj_label(kind, raw, doc.index)
        try:
            item = _convert(kind, raw, doc)
        except InputError as err:
            raise err.with_context(source=doc.source, obj=label) from None
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
        first_seen[ident] = item
        result.objects.append(item)
    return result
