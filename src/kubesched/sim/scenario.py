"""Scenarios: user manifests turned into a timeline of cluster changes, and their run.

``load_scenario`` reads the ``-f`` inputs, checks them as the API server would
(PriorityClasses first, Priority admission for every pod, pods bound to
existing nodes) and reads the simulation annotations:

- ``kubesched.io/create-at``: when the object is created (default ``0s``;
  objects of the same instant are created in input order);
- ``kubesched.io/delete-at``: when it is deleted (pods gracefully; a node
  takes its pods with it);
- ``kubesched.io/run-for``: a pod (or each pod of a Deployment/ReplicaSet)
  succeeds after running this long.

Absolute times in the input (``status.startTime`` of running pods, as in a
dump of a live cluster) are rebased so that the latest of them is time 0:
the simulation starts right after the snapshot was taken.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

from kubesched.api.admission import SYSTEM_PRIORITY_CLASSES, PriorityClasses
from kubesched.api.convert import Workload
from kubesched.api.duration import parse_duration
from kubesched.api.errors import InputError
from kubesched.api.input_limits import DEFAULT_LIMITS, InputLimits, too_many
from kubesched.api.load import (
    STDIN_SOURCE,
    Document,
    Loaded,
    LoadedObject,
    LoadResult,
    load_objects,
    read_documents,
)
from kubesched.api.sim_annotations import CREATE_AT, DELETE_AT, RUN_FOR
from kubesched.api.storage import CSINode, PersistentVolume, PersistentVolumeClaim, StorageClass
from kubesched.api.types import (
    LABEL_HOSTNAME,
    Namespace,
    Node,
    Pod,
    PodDisruptionBudget,
    PriorityClass,
)
from kubesched.api.workloads import workload_times
from kubesched.driver.loop import DEFAULT_HORIZON
from kubesched.driver.record import RunRecord
from kubesched.driver.report import build_result
from kubesched.explain.recorder import ExplanationRecorder
from kubesched.framework.config import SchedulerConfig
from kubesched.scheduler.config import default_config, parse_config
from kubesched.scheduler.registry import in_tree_registry
from kubesched.sim.cluster import REASON_DELETED, Cluster
from kubesched.sim.controllers.manager import ControllerManager
from kubesched.sim.engine import PRIO_ADMISSION
from kubesched.sim.owners import complete_owner_uids
from kubesched.sim.priority_classes import ClassStep, admit, admit_in_time_order, class_steps
from kubesched.sim.simulation import Simulation

_STORAGE_KINDS = (PersistentVolumeClaim, PersistentVolume, StorageClass, CSINode)


@dataclass(slots=True)
class Item:
    """One object of the timeline."""

    kind: str
    obj: Any
    create_at: int
    delete_at: int | None
    run_for: int | None
    order: int
    spec_priority: int | None = None
    spec_preemption_policy: str | None = None
    source: str = ""
    admitted: bool = False
    """A Pod admitted (or a workload's template checked) on the class timeline."""


@dataclass(slots=True)
class Scenario:
    """``ignored``/``unmodelled``/``skipped_claims`` are what loading left out
    (``kubesched.api.load.LoadResult``), for the CLI's summary and warning lines."""

    config: SchedulerConfig
    items: list[Item]
    ignored: Counter[str] = field(default_factory=Counter)
    unmodelled: Counter[str] = field(default_factory=Counter)
    skipped_claims: list[str] = field(default_factory=list)
    epoch: int = 0
    """Unix time (ns) of the run's time 0: the snapshot's instant when the input has
    absolute times (they are rebased on it), else 1970-01-01T00:00:00Z."""

    @property
    def classes(self) -> list[PriorityClass]:
        """Every PriorityClass of the scenario: the built-in system classes, then
        the input's in input order (whatever their lifetimes)."""
        builtin = {pc.name for pc in SYSTEM_PRIORITY_CLASSES}
        given = sorted(
            (i for i in self.items if isinstance(i.obj, PriorityClass)), key=lambda i: i.order
        )
        return [*SYSTEM_PRIORITY_CLASSES, *(i.obj for i in given if i.obj.name not in builtin)]

    def class_steps(self) -> list[ClassStep]:
        """The PriorityClass creations and deletions, in the order the run applies them."""
        sources = {i.order: i.source for i in self.items}
        return class_steps(self.items, sources.__getitem__)


def _annotation_duration(
    loaded: Loaded[Any], key: str, *, allow_negative: bool = False
) -> int | None:
    text = loaded.annotations.get(key)
    if text is None:
        return None
    try:
        value = parse_duration(text)
    except ValueError as err:
        raise InputError(
            str(err), source=loaded.source, field=f'metadata.annotations["{key}"]'
        ) from None
    if value < 0 and not allow_negative:
        raise InputError(
            f'"{text}": must not be negative',
            source=loaded.source,
            field=f'metadata.annotations["{key}"]',
        )
    return value


def _label(item: Loaded[Any] | Item) -> str:
    obj: LoadedObject = item.obj
    kind = item.kind.lower()
    if isinstance(obj, Pod | PodDisruptionBudget | Workload | PersistentVolumeClaim):
        return f"{kind} {obj.namespace}/{obj.name}"
    name = "" if isinstance(obj, dict) else obj.name  # dict: the scheduler configuration
    return f"{kind} {name}" if name else kind


def load_scenario(
    paths: Sequence[str],
    *,
    config_file: str | None = None,
    stdin: TextIO | None = None,
    limits: InputLimits = DEFAULT_LIMITS,
    first: Sequence[Document] = (),
) -> Scenario:
    """Read, check and order the inputs; raises InputError for bad input, and for
    no objects at all (kubectl's ``no objects passed to apply``). ``first``: objects
    that come before the files' (a live cluster's snapshot), counted in the limits."""
    docs = [*first, *read_documents(paths, stdin, limits=limits)]
    if len(docs) > limits.max_objects:
        raise InputError(too_many(limits))
    if not docs:
        named = ", ".join(STDIN_SOURCE if p == "-" else p for p in paths)
        raise InputError("no objects passed to apply", source=named or None)
    result = load_objects(docs, limits=limits)
    config = _config(result, config_file, in_tree_registry().keys())
    return scenario_from_result(result, config)


def scenario_from_result(
    result: LoadResult, config: SchedulerConfig, *, base: Scenario | None = None
) -> Scenario:
    """Check and order loaded objects as the API server would take them.

    Every pod is admitted at its creation time against the PriorityClasses that
    exist then (``kubesched.sim.priority_classes``). With ``base``, the objects
    join that scenario: its PriorityClasses (a class of the same name alive at
    the same time is an error), its nodes (for pods bound to them) and its items
    (these come after, in input order; the base's pods stay as admitted); the
    base's configuration wins."""
    if base is None:
        items: list[Item] = []
        first = 0
        ignored = Counter(result.ignored)
        unmodelled = Counter(result.unmodelled)
        skipped = list(result.skipped_claims)
        node_names = set()
    else:
        config = base.config
        items = list(base.items)
        first = max((i.order for i in items), default=-1) + 1
        ignored = Counter(base.ignored) + Counter(result.ignored)
        unmodelled = Counter(base.unmodelled) + Counter(result.unmodelled)
        skipped = [*base.skipped_claims, *result.skipped_claims]
        node_names = {i.obj.name for i in items if isinstance(i.obj, Node)}
    node_names |= {o.obj.name for o in result.of_type(Node)}
    for order, loaded in enumerate(result.objects, start=first):
        if loaded.kind == "KubeSchedulerConfiguration":
            continue
        try:
            create_at = _annotation_duration(loaded, CREATE_AT) or 0
            delete_at = _annotation_duration(loaded, DELETE_AT)
            run_for = _annotation_duration(loaded, RUN_FOR)
        except InputError as err:
            raise err.with_context(obj=_label(loaded)) from None
        if delete_at is not None and delete_at < create_at:
            raise InputError(
                f"delete-at ({loaded.annotations[DELETE_AT]}) is before create-at",
                source=loaded.source,
                obj=_label(loaded),
                field=f'metadata.annotations["{DELETE_AT}"]',
            )
        obj = loaded.obj
        if isinstance(obj, Workload):
            run_for = _template_run_for(loaded, obj) if run_for is None else run_for
        if isinstance(obj, Pod) and obj.node_name and obj.node_name not in node_names:
            raise InputError(
                f'node "{obj.node_name}" not found',
                source=loaded.source,
                obj=_label(loaded),
                field="spec.nodeName",
            )
        items.append(
            Item(
                loaded.kind,
                obj,
                create_at,
                delete_at,
                run_for,
                order,
                loaded.spec_priority,
                loaded.spec_preemption_policy,
                loaded.source,
            )
        )
    complete_owner_uids(items)
    epoch = _rebase_times(items)
    if epoch is None:
        epoch = base.epoch if base is not None else 0
    items.sort(key=lambda i: (i.create_at, i.order))
    scenario = Scenario(config, items, ignored, unmodelled, skipped, epoch)
    _admit_new_items(scenario)
    return scenario


def _admit_new_items(scenario: Scenario) -> None:
    """Admit each pod not admitted yet, and check each workload's template, at its
    creation time on the scenario's PriorityClass timeline."""
    checks: list[tuple[int, int, Callable[[PriorityClasses], None]]] = []
    for item in scenario.items:
        if item.admitted:
            continue
        if isinstance(item.obj, Pod):
            checks.append((item.create_at, item.order, _pod_admission(item)))
        elif isinstance(item.obj, Workload):
            checks.append((item.create_at, item.order, _template_check(item)))
        item.admitted = True
    admit_in_time_order(scenario.class_steps(), checks)


def load_config(config_file: str) -> SchedulerConfig:
    """The KubeSchedulerConfiguration of ``config_file`` alone (``--config`` without
    ``-f``, as with ``--trace``); InputError if it has none."""
    return _config(LoadResult(), config_file, in_tree_registry().keys())


def _config(result: LoadResult, config_file: str | None, supported: Any) -> SchedulerConfig:
    raws: list[tuple[dict[str, Any], str]] = []
    if config_file is not None:
        cfg_docs = load_objects(read_documents([config_file]))
        found = cfg_docs.of_kind("KubeSchedulerConfiguration")
        if not found:
            raise InputError("no KubeSchedulerConfiguration in this file", source=config_file)
        raws.extend((o.obj, o.source) for o in found)  # type: ignore[misc]
    raws.extend((o.obj, o.source) for o in result.of_kind("KubeSchedulerConfiguration"))  # type: ignore[misc]
    if len(raws) > 1:
        raise InputError(
            f"more than one KubeSchedulerConfiguration (in {raws[0][1]} and {raws[1][1]})",
            source=raws[1][1],
        )
    if not raws:
        return default_config(supported=supported)
    raw, source = raws[0]
    return parse_config(raw, source=source, supported=supported)


def _pod_admission(item: Item) -> Callable[[PriorityClasses], None]:
    def check(classes: PriorityClasses) -> None:
        try:
            admit(item.obj, classes, item.spec_priority, item.spec_preemption_policy)
        except InputError as err:
            raise err.with_context(source=item.source, obj=_label(item)) from None

    return check


def _template_run_for(loaded: Loaded[Any], w: Workload) -> int | None:
    text = w.template_annotations.get(RUN_FOR)
    if text is None:
        return None
    try:
        return parse_duration(text)
    except ValueError as err:
        raise InputError(
            str(err),
            source=loaded.source,
            obj=_label(loaded),
            field=f'spec.template.metadata.annotations["{RUN_FOR}"]',
        ) from None


def _template_check(item: Item) -> Callable[[PriorityClasses], None]:
    w: Workload = item.obj

    def check(classes: PriorityClasses) -> None:
        probe = _template_pod(w, "probe")
        try:
            admit(probe, classes, w.template_priority, w.template_preemption_policy)
        except InputError as err:
            raise InputError(
                err.message,
                source=item.source,
                obj=_label(item),
                field="spec.template." + (err.field or "spec"),
            ) from None

    return check


def _template_pod(w: Workload, name: str) -> Pod:
    return Pod(
        name,
        w.namespace,
        labels=dict(w.template_labels),
        annotations=dict(w.template_annotations),
        spec=w.template_spec,
        priority_class_name=w.template_priority_class_name,
        node_name=w.template_node_name,
    )


def _rebase_times(items: list[Item]) -> int | None:
    """Rebase the pods' and PDBs' absolute times so that the latest absolute time of
    the input (workloads' included) is 0; returns that epoch (None: no absolute time).
    Workloads keep theirs: the controllers convert them with the epoch."""
    stamps = [
        i.obj.start_time for i in items if isinstance(i.obj, Pod) and i.obj.start_time is not None
    ]
    for i in items:
        if isinstance(i.obj, PodDisruptionBudget):
            stamps.extend(i.obj.status.disrupted_pods.values())
        elif isinstance(i.obj, Workload):
            stamps.extend(t for t in workload_times(i.obj) if t is not None)
    if not stamps:
        return None
    epoch = max(stamps)
    for i in items:
        if isinstance(i.obj, Pod):
            if i.obj.start_time is not None:
                i.obj.start_time -= epoch
            if i.obj.deletion_timestamp is not None:
                i.obj.deletion_timestamp -= epoch
        elif isinstance(i.obj, PodDisruptionBudget):
            d = i.obj.status.disrupted_pods
            for name in d:
                d[name] -= epoch
    return epoch


# --------------------------------------------------------------------------- running


@dataclass(slots=True)
class Run:
    simulation: Simulation
    seed: int
    end_time: int

    @property
    def cluster(self) -> Cluster:
        return self.simulation.cluster

    @property
    def record(self) -> RunRecord:
        """What happened (the reports read this, not the cluster)."""
        return self.simulation.record

    explanations: ExplanationRecorder | None = None
    """Why each attempt ended as it did (``run_scenario(explain=True)``)."""

    def result(self) -> dict[str, Any]:
        return build_result(
            self.record,
            seed=self.seed,
            end_time=self.end_time,
            metrics=self.simulation.metrics.snapshot(),
            explanations=None if self.explanations is None else self.explanations.result(),
        )


def run_scenario(
    scenario: Scenario,
    *,
    seed: int = 0,
    until: int | None = None,
    watch: bool = False,
    per_node: bool = False,
    horizon: int = DEFAULT_HORIZON,
    feature_gates: dict[str, bool] | None = None,
    progress: Callable[[int], None] | None = None,
    explain: bool = False,
) -> Run:
    """Run the scenario; ``progress`` is called with the simulated time as it
    advances; ``explain`` records why every attempt ended as it did."""
    registry = dict(in_tree_registry(feature_gates))
    sim = Simulation(scenario.config, registry, seed=seed, watch=watch, on_cycle=progress)
    if per_node:
        for fwk in sim.scheduler.profiles.values():
            fwk.per_node = True
    cluster = sim.cluster
    classes = PriorityClasses()
    controllers = ControllerManager(cluster, classes, seed, scenario.epoch)
    cluster.watchers.append(controllers)
    cluster.scale_of = controllers.scale_of
    cluster.selector_of = controllers.selector_of
    engine = sim.engine
    for step in scenario.class_steps():
        engine.at(step.time, _class_change(step, classes, controllers), PRIO_ADMISSION)
    for item in scenario.items:
        if isinstance(item.obj, PriorityClass):
            continue
        engine.at(item.create_at, _creator(item, sim, controllers))
        if item.delete_at is not None:
            engine.at(item.delete_at, _deleter(item, sim, controllers))
    recorder = None
    if explain:
        recorder = ExplanationRecorder.attach(sim.scheduler)
    stats = sim.run(until=until, horizon=horizon)
    return Run(sim, seed, stats.end_time, recorder)


def _class_change(
    step: ClassStep, classes: PriorityClasses, controllers: ControllerManager
) -> Callable[[], None]:
    def change() -> None:
        step.apply(classes)  # checked when the scenario was loaded
        if step.create:
            controllers.retry_failed_creates()

    return change


def _creator(item: Item, sim: Simulation, controllers: ControllerManager) -> Any:
    cluster = sim.cluster
    obj = item.obj

    def create() -> None:
        if isinstance(obj, Node):
            if LABEL_HOSTNAME not in obj.labels:
                obj.labels = {**obj.labels, LABEL_HOSTNAME: obj.name}  # the kubelet's label
            cluster.create_node(obj)
        elif isinstance(obj, Pod):
            cluster.create_pod(obj, item.run_for)
            if obj.deletion_timestamp is not None:
                # A pod dumped while terminating goes when its grace period ends.
                cluster.expire_at(obj, obj.deletion_timestamp, REASON_DELETED)
        elif isinstance(obj, PodDisruptionBudget):
            cluster.add_pdb(obj)
        elif isinstance(obj, Namespace):
            cluster.namespaces[obj.name] = obj
        elif isinstance(obj, _STORAGE_KINDS):
            cluster.volumes.create(obj)
        elif isinstance(obj, Workload):
            controllers.create(obj, item.run_for)

    return create


def _deleter(item: Item, sim: Simulation, controllers: ControllerManager) -> Any:
    cluster = sim.cluster
    obj = item.obj

    def delete() -> None:
        if isinstance(obj, Node):
            cluster.delete_node(obj.name)
        elif isinstance(obj, Pod):
            cur = cluster.pods.get(obj.key)
            if cur is not None and cur.uid == obj.uid:
                cluster.delete_gracefully(cur, REASON_DELETED)
        elif isinstance(obj, PodDisruptionBudget):
            cluster.remove_pdb(obj)
        elif isinstance(obj, Namespace):
            cluster.namespaces.pop(obj.name, None)
        elif isinstance(obj, _STORAGE_KINDS):
            cluster.volumes.delete(obj)
        elif isinstance(obj, Workload):
            controllers.delete(obj)

    return delete
