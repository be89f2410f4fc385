"""Taints, tolerations and topology spread constraints, validated as the API
server validates them (validateNodeTaints, ValidateTolerations,
validateTopologySpreadConstraints) with upstream's wording."""

from __future__ import annotations

from typing import Final

from kubesched.api.convert.selectors import label_selector
from kubesched.api.messages import child, fail, forbidden, invalid, quote, required, unsupported
from kubesched.api.reader import (
    Raw,
    enum,
    get_int,
    get_str,
    get_str_list,
    map_list,
    opt_enum,
    opt_int,
    req_str,
)
from kubesched.api.types import (
    NO_EXECUTE,
    NO_SCHEDULE,
    PREFER_NO_SCHEDULE,
    Taint,
    Toleration,
    TopologySpreadConstraint,
)

TAINT_EFFECTS: Final = (NO_SCHEDULE, PREFER_NO_SCHEDULE, NO_EXECUTE)
# Lt/Gt exist behind the alpha TaintTolerationComparisonOperators gate (off by default).
TOLERATION_OPERATORS: Final = ("Equal", "Exists")
WHEN_UNSATISFIABLE: Final = ("DoNotSchedule", "ScheduleAnyway")
NODE_INCLUSION_POLICIES: Final = ("Honor", "Ignore")


def taint(raw: Raw, path: str) -> Taint:
    key = req_str(raw, "key", path)
    effect = get_str(raw, "effect", path)
    if not effect:
        raise fail(child(path, "effect"), required())
    enum(effect, TAINT_EFFECTS, child(path, "effect"))
    return Taint(key=key, value=get_str(raw, "value", path), effect=effect)


def taints(raw: Raw, key: str, path: str) -> tuple[Taint, ...]:
    out = map_list(raw, key, path, taint)
    seen: set[tuple[str, str]] = set()
    for i, t in enumerate(out):
        if (t.key, t.effect) in seen:
            raise fail(
                f"{child(path, key)}[{i}]",
                f"Duplicate value: {quote(f'{t.key}:{t.effect}')}: "
                "taints must be unique by key and effect pair",
            )
        seen.add((t.key, t.effect))
    return out


def toleration(raw: Raw, path: str) -> Toleration:
    key = get_str(raw, "key", path)
    op = get_str(raw, "operator", path)
    value = get_str(raw, "value", path)
    effect = get_str(raw, "effect", path)
    seconds = opt_int(raw, "tolerationSeconds", path)
    if not key and op != "Exists":
        raise fail(
            child(path, "operator"),
            invalid(
                op,
                'operator must be Exists when `key` is empty, which means "match all values '
                'and all keys"',
            ),
        )
    if seconds is not None and effect != NO_EXECUTE:
        raise fail(
            child(path, "effect"),
            invalid(effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"),
        )
    if op not in ("", *TOLERATION_OPERATORS):
        raise fail(child(path, "operator"), unsupported(op, TOLERATION_OPERATORS))
    if op == "Exists" and value:
        raise fail(
            child(path, "operator"), invalid(op, "value must be empty when `operator` is 'Exists'")
        )
    if effect:
        enum(effect, TAINT_EFFECTS, child(path, "effect"))
    return Toleration(
        key=key, operator=op or "Equal", value=value, effect=effect, toleration_seconds=seconds
    )


def spread_constraint(raw: Raw, path: str) -> TopologySpreadConstraint:
    max_skew = get_int(raw, "maxSkew", path, bits=32)
    if max_skew <= 0:
        raise fail(child(path, "maxSkew"), invalid(max_skew, "must be greater than zero"))
    topology_key = get_str(raw, "topologyKey", path)
    if not topology_key:
        raise fail(child(path, "topologyKey"), required("can not be empty"))
    when = get_str(raw, "whenUnsatisfiable", path)
    enum(when, WHEN_UNSATISFIABLE, child(path, "whenUnsatisfiable"))
    min_domains = opt_int(raw, "minDomains", path, bits=32)
    if min_domains is not None:
        mp = child(path, "minDomains")
        if min_domains <= 0:
            raise fail(mp, invalid(min_domains, "must be greater than zero"))
        if when != "DoNotSchedule":
            raise fail(
                mp,
                invalid(
                    min_domains,
                    f"can only use minDomains if whenUnsatisfiable=DoNotSchedule, not {when}",
                ),
            )
    selector = label_selector(raw.get("labelSelector"), child(path, "labelSelector"))
    match_label_keys = get_str_list(raw, "matchLabelKeys", path)
    if match_label_keys and selector is None:
        raise fail(
            child(path, "matchLabelKeys"),
            forbidden("must not be specified when labelSelector is not set"),
        )
    return TopologySpreadConstraint(
        max_skew=max_skew,
        topology_key=topology_key,
        when_unsatisfiable=when,
        label_selector=selector,
        min_domains=min_domains,
        node_affinity_policy=opt_enum(raw, "nodeAffinityPolicy", path, NODE_INCLUSION_POLICIES),
        node_taints_policy=opt_enum(raw, "nodeTaintsPolicy", path, NODE_INCLUSION_POLICIES),
        match_label_keys=match_label_keys,
    )


def spread_constraints(raw: Raw, path: str) -> tuple[TopologySpreadConstraint, ...]:
    key = "topologySpreadConstraints"
    out = map_list(raw, key, path, spread_constraint)
    first: dict[tuple[str, str], int] = {}
    for i, c in enumerate(out):
        pair = (c.topology_key, c.when_unsatisfiable)
        if pair in first:
            # Upstream reports the earlier constraint of the repeated pair.
            raise fail(
                f"{child(path, key)}[{first[pair]}].{{topologyKey, whenUnsatisfiable}}",
                f"Duplicate value: {quote('{' + pair[0] + ', ' + pair[1] + '}')}",
            )
        first[pair] = i
    return out
