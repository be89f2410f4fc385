"""``pluginConfig[].args``: reading, upstream defaulting, and the args' validation.

One reader per args type upstream registers (config/v1 defaults.go,
validation/validation_pluginargs.go), returning the ``framework.config`` dataclass
with defaults plus the errors the caller raises in upstream's order: ``errors``
(``ValidateKubeSchedulerConfiguration``, every entry, enabled or not) and
``init_errors`` (only the constructor's: upstream keys NodeResourcesFit's
validator as ``"NodeResourcesFitArgs"``, so only ``NewFit`` checks its args).
VolumeBinding and DynamicResources args are only decoded strictly; other plugins'
args are ignored, as upstream ignores unknown ``<Name>Args`` kinds.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from kubesched.api.messages import child
from kubesched.framework.config import (
    LEAST_ALLOCATED,
    LIST_DEFAULTING,
    MOST_ALLOCATED,
    REQUESTED_TO_CAPACITY_RATIO,
    SYSTEM_DEFAULTING,
    DefaultPreemptionArgs,
    InterPodAffinityArgs,
    NodeAffinityArgs,
    NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs,
    PluginArgs,
    PodTopologySpreadArgs,
    ResourceSpec,
    ScoringStrategy,
    UtilizationShapePoint,
    VolumeBindingArgs,
)
from kubesched.scheduler.config.core_objects import (
    read_node_affinity,
    read_topology_spread_constraint,
)
from kubesched.scheduler.config.decode import (
    INT64,
    as_mapping,
    check_fields,
    get_bool,
    get_int,
    get_list,
    get_mapping,
    get_str,
    get_str_list,
)
from kubesched.scheduler.config.defaults import (
    API_GROUP,
    API_VERSION,
    DEFAULT_PREEMPTION,
    DYNAMIC_RESOURCES,
    INTER_POD_AFFINITY,
    MAX_CUSTOM_PRIORITY_SCORE,
    NODE_AFFINITY,
    NODE_RESOURCES_BALANCED_ALLOCATION,
    NODE_RESOURCES_FIT,
    POD_TOPOLOGY_SPREAD,
    VOLUME_BINDING,
)
from kubesched.scheduler.config.field_errors import (
    FieldError,
    duplicate,
    fail,
    forbidden,
    index,
    invalid,
    not_supported,
    required,
    validate_label_name,
)

DEFAULT_RESOURCES = (ResourceSpec("cpu", 1), ResourceSpec("memory", 1))
_TYPE_META = ("kind", "apiVersion")


@dataclass(frozen=True, slots=True)
class ParsedArgs:
    args: PluginArgs | None
    errors: tuple[FieldError, ...] = ()
    init_errors: tuple[FieldError, ...] = ()


# --------------------------------------------------------------------------- shared parts


def _read_resources(raw: Mapping[str, object], path: str) -> tuple[ResourceSpec, ...]:
    specs = []
    for i, item in enumerate(get_list(raw, "resources", path) or ()):
        p = index(child(path, "resources"), i)
        m = as_mapping(item, p)
        check_fields(m, p, ("name", "weight"))
        # v1 defaulting: an unset or zero weight becomes 1.
        specs.append(ResourceSpec(get_str(m, "name", p) or "", get_int(m, "weight", p, INT64) or 1))
    return tuple(specs) or DEFAULT_RESOURCES


def _read_shape(items: Sequence[object] | None, path: str) -> tuple[UtilizationShapePoint, ...]:
    points = []
    for i, item in enumerate(items or ()):
        p = index(path, i)
        m = as_mapping(item, p)
        check_fields(m, p, ("utilization", "score"))
        points.append(
            UtilizationShapePoint(get_int(m, "utilization", p) or 0, get_int(m, "score", p) or 0)
        )
    return tuple(points)


def _shape_errors(shape: tuple[UtilizationShapePoint, ...], path: str) -> list[FieldError]:
    """``validateFunctionShape``."""
    if not shape:
        return [required(path, "at least one point must be specified")]
    errs = []
    for i in range(1, len(shape)):
        if shape[i - 1].utilization >= shape[i].utilization:
            errs.append(
                invalid(
                    child(index(path, i), "utilization"),
                    shape[i].utilization,
                    "values must be sorted in increasing order",
                )
            )
            break
    for i, point in enumerate(shape):
        if not 0 <= point.utilization <= 100:
            errs.append(
                invalid(
                    child(index(path, i), "utilization"),
                    point.utilization,
                    "not in valid range [0, 100]",
                )
            )
        if not 0 <= point.score <= MAX_CUSTOM_PRIORITY_SCORE:
            errs.append(
                invalid(
                    child(index(path, i), "score"),
                    point.score,
                    f"not in valid range [0, {MAX_CUSTOM_PRIORITY_SCORE}]",
                )
            )
    return errs


# --------------------------------------------------------------------------- readers


def _default_preemption(raw: Mapping[str, object], path: str) -> ParsedArgs:
    pct_key, abs_key = "minCandidateNodesPercentage", "minCandidateNodesAbsolute"
    check_fields(raw, path, (*_TYPE_META, pct_key, abs_key))
    pct = get_int(raw, pct_key, path)
    absolute = get_int(raw, abs_key, path)
    args = DefaultPreemptionArgs(
        min_candidate_nodes_percentage=10 if pct is None else pct,
        min_candidate_nodes_absolute=100 if absolute is None else absolute,
    )
    pct_path, abs_path = child(path, pct_key), child(path, abs_key)
    pct, absolute = args.min_candidate_nodes_percentage, args.min_candidate_nodes_absolute
    errs = []
    if not 0 <= pct <= 100:
        errs.append(invalid(pct_path, pct, "not in valid range [0, 100]"))
    if absolute < 0:
        errs.append(invalid(abs_path, absolute, "not in valid range [0, inf)"))
    if pct == 0 and absolute == 0:
        errs.append(invalid(pct_path, 0, "cannot be zero at the same time as " + abs_key))
        errs.append(invalid(abs_path, 0, "cannot be zero at the same time as " + pct_key))
    return ParsedArgs(args, tuple(errs))


def _inter_pod_affinity(raw: Mapping[str, object], path: str) -> ParsedArgs:
    key = "hardPodAffinityWeight"
    check_fields(raw, path, (*_TYPE_META, key, "ignorePreferredTermsOfExistingPods"))
    weight = get_int(raw, key, path)
    args = InterPodAffinityArgs(
        hard_pod_affinity_weight=1 if weight is None else weight,
        ignore_preferred_terms_of_existing_pods=bool(
            get_bool(raw, "ignorePreferredTermsOfExistingPods", path)
        ),
    )
    errs = []
    if not 0 <= args.hard_pod_affinity_weight <= 100:
        errs.append(
            invalid(child(path, key), args.hard_pod_affinity_weight, "not in valid range [0, 100]")
        )
    return ParsedArgs(args, tuple(errs))


def _node_affinity(raw: Mapping[str, object], path: str) -> ParsedArgs:
    check_fields(raw, path, (*_TYPE_META, "addedAffinity"))
    added = get_mapping(raw, "addedAffinity", path)
    if added is None:
        return ParsedArgs(NodeAffinityArgs())
    affinity, errs = read_node_affinity(added, child(path, "addedAffinity"))
    return ParsedArgs(NodeAffinityArgs(added_affinity=affinity), tuple(errs))


def _balanced_allocation(raw: Mapping[str, object], path: str) -> ParsedArgs:
    check_fields(raw, path, (*_TYPE_META, "resources"))
    resources = _read_resources(raw, path)
    errs = []
    seen: set[str] = set()
    for i, spec in enumerate(resources):
        p = index(child(path, "resources"), i)
        if spec.name in seen:
            errs.append(duplicate(child(p, "name"), spec.name))
        seen.add(spec.name)
        if spec.weight != 1:
            errs.append(invalid(child(p, "weight"), spec.weight, "must be 1"))
    return ParsedArgs(NodeResourcesBalancedAllocationArgs(resources), tuple(errs))


_STRATEGY_TYPES = (LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO)


def _fit(raw: Mapping[str, object], path: str) -> ParsedArgs:
    check_fields(
        raw, path, (*_TYPE_META, "ignoredResources", "ignoredResourceGroups", "scoringStrategy")
    )
    ignored = get_str_list(raw, "ignoredResources", path) or ()
    groups = get_str_list(raw, "ignoredResourceGroups", path) or ()
    errs: list[FieldError] = []
    for i, res in enumerate(ignored):
        errs.extend(validate_label_name(index(child(path, "ignoredResources"), i), res))
    for i, group in enumerate(groups):
        p = index(child(path, "ignoredResourceGroups"), i)
        if "/" in group:
            errs.append(invalid(p, group, "resource group name can't contain '/'"))
        errs.extend(validate_label_name(p, group))

    spath = child(path, "scoringStrategy")
    strategy_raw = get_mapping(raw, "scoringStrategy", path)
    if strategy_raw is None:
        strategy = ScoringStrategy(LEAST_ALLOCATED, DEFAULT_RESOURCES)
    else:
        check_fields(strategy_raw, spath, ("type", "resources", "requestedToCapacityRatio"))
        stype = get_str(strategy_raw, "type", spath) or ""
        rtcr_path = child(spath, "requestedToCapacityRatio")
        rtcr = get_mapping(strategy_raw, "requestedToCapacityRatio", spath)
        shape: tuple[UtilizationShapePoint, ...] = ()
        if rtcr is not None:
            check_fields(rtcr, rtcr_path, ("shape",))
            shape_items = get_list(rtcr, "shape", rtcr_path)
            shape = _read_shape(shape_items, child(rtcr_path, "shape"))
        strategy = ScoringStrategy(stype, _read_resources(strategy_raw, spath), shape)
        if stype not in _STRATEGY_TYPES:
            errs.append(not_supported(child(spath, "type"), stype, _STRATEGY_TYPES))
        for i, spec in enumerate(strategy.resources):
            if not 0 < spec.weight <= 100:
                errs.append(
                    invalid(
                        child(index(child(spath, "resources"), i), "weight"),
                        spec.weight,
                        f"resource weight of {spec.name} not in valid range (0, 100]",
                    )
                )
        if stype == REQUESTED_TO_CAPACITY_RATIO:
            if rtcr is None:
                errs.append(
                    required(rtcr_path, "must be specified when type is RequestedToCapacityRatio")
                )
            else:
                errs.extend(_shape_errors(shape, child(rtcr_path, "shape")))
        elif rtcr is not None:
            errs.append(
                forbidden(rtcr_path, "must be nil when type is not RequestedToCapacityRatio")
            )
    args = NodeResourcesFitArgs(tuple(ignored), tuple(groups), strategy)
    return ParsedArgs(args, init_errors=tuple(errs))


def _pod_topology_spread(raw: Mapping[str, object], path: str) -> ParsedArgs:
    check_fields(raw, path, (*_TYPE_META, "defaultConstraints", "defaultingType"))
    cpath = child(path, "defaultConstraints")
    constraints = tuple(
        read_topology_spread_constraint(as_mapping(item, index(cpath, i)), index(cpath, i))
        for i, item in enumerate(get_list(raw, "defaultConstraints", path) or ())
    )
    dtype = get_str(raw, "defaultingType", path) or SYSTEM_DEFAULTING
    errs: list[FieldError] = []
    tpath = child(path, "defaultingType")
    if dtype not in (SYSTEM_DEFAULTING, LIST_DEFAULTING):
        errs.append(not_supported(tpath, dtype, (SYSTEM_DEFAULTING, LIST_DEFAULTING)))
    elif dtype == SYSTEM_DEFAULTING and constraints:
        errs.append(invalid(tpath, dtype, "when .defaultConstraints are not empty"))
    for i, c in enumerate(constraints):
        p = index(cpath, i)
        if c.max_skew <= 0:
            errs.append(invalid(child(p, "maxSkew"), c.max_skew, "not in valid range (0, inf)"))
        if not c.topology_key:
            errs.append(required(child(p, "topologyKey"), "can not be empty"))
        else:
            errs.extend(validate_label_name(child(p, "topologyKey"), c.topology_key))
        wpath = child(p, "whenUnsatisfiable")
        if not c.when_unsatisfiable:
            errs.append(required(wpath, "can not be empty"))
        elif c.when_unsatisfiable not in ("DoNotSchedule", "ScheduleAnyway"):
            errs.append(
                not_supported(wpath, c.when_unsatisfiable, ("DoNotSchedule", "ScheduleAnyway"))
            )
        if c.label_selector is not None:
            errs.append(
                forbidden(
                    child(p, "labelSelector"),
                    "constraint must not define a selector, as they deduced for each pod",
                )
            )
        for other in constraints[:i]:
            if (other.topology_key, other.when_unsatisfiable) == (
                c.topology_key,
                c.when_unsatisfiable,
            ):
                errs.append(duplicate(p, f"{{{c.topology_key}, {c.when_unsatisfiable}}}"))
                break
    return ParsedArgs(PodTopologySpreadArgs(constraints, dtype), tuple(errs))


def _volume_binding(raw: Mapping[str, object], path: str) -> ParsedArgs:
    check_fields(raw, path, (*_TYPE_META, "bindTimeoutSeconds", "shape"))
    timeout = get_int(raw, "bindTimeoutSeconds", path, INT64)
    _read_shape(get_list(raw, "shape", path), child(path, "shape"))
    errs = []
    if timeout is not None and timeout < 0:
        errs.append(
            invalid(
                child(path, "bindTimeoutSeconds"),
                timeout,
                "invalid BindTimeoutSeconds, should not be a negative value",
            )
        )
    # v1 defaulting: an unset timeout becomes the default (zero stays zero).
    args = VolumeBindingArgs() if timeout is None else VolumeBindingArgs(timeout)
    return ParsedArgs(args, tuple(errs))


def _dynamic_resources(raw: Mapping[str, object], path: str) -> ParsedArgs:
    check_fields(raw, path, (*_TYPE_META, "filterTimeout", "bindingTimeout"))
    get_str(raw, "filterTimeout", path)
    get_str(raw, "bindingTimeout", path)
    return ParsedArgs(None)


_READERS: dict[str, Callable[[Mapping[str, object], str], ParsedArgs]] = {
    DEFAULT_PREEMPTION: _default_preemption,
    INTER_POD_AFFINITY: _inter_pod_affinity,
    NODE_AFFINITY: _node_affinity,
    NODE_RESOURCES_BALANCED_ALLOCATION: _balanced_allocation,
    NODE_RESOURCES_FIT: _fit,
    POD_TOPOLOGY_SPREAD: _pod_topology_spread,
    VOLUME_BINDING: _volume_binding,
    DYNAMIC_RESOURCES: _dynamic_resources,
}


def read_plugin_args(name: str, raw: object, path: str) -> ParsedArgs | None:
    """The args of ``pluginConfig`` entry ``name`` at ``path``; None for plugins without
    a registered args kind (passed through undecoded upstream). ``ConfigError`` for
    unknown fields, wrong types or a foreign ``kind``."""
    reader = _READERS.get(name)
    if reader is None:
        return None
    m = {} if raw is None else as_mapping(raw, path)
    want_kind = name + "Args"
    kind = get_str(m, "kind", path)
    api_version = get_str(m, "apiVersion", path)
    if api_version is not None and api_version != API_VERSION:
        raise fail(
            child(path, "apiVersion"),
            f'no kind "{kind or want_kind}" is registered for version "{api_version}"',
        )
    if kind is not None and kind != want_kind:
        raise fail(
            child(path, "kind"),
            f"args for plugin {name} were not of type {want_kind}.{API_GROUP}, "
            f"got {kind}.{API_GROUP}",
        )
    return reader(m, path)


def default_args(name: str) -> PluginArgs | None:
    """The args an enabled plugin gets without a ``pluginConfig`` entry."""
    parsed = read_plugin_args(name, None, "")
    return None if parsed is None else parsed.args
