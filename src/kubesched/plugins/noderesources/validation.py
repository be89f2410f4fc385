"""Argument checks the noderesources plugins make when built (upstream
validation_pluginargs.go, as NewFit / NewBalancedAllocation call it).
The configuration loader checks the same with field paths; these raise
``ValueError`` for plugins built directly.
"""

from __future__ import annotations

from typing import Final

from kubesched.framework.config import (
    LEAST_ALLOCATED,
    MOST_ALLOCATED,
    REQUESTED_TO_CAPACITY_RATIO,
    NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs,
    ScoringStrategy,
)

SUPPORTED_STRATEGIES: Final = (LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO)
MIN_UTILIZATION: Final = 0
MAX_UTILIZATION: Final = 100
MIN_CUSTOM_SCORE: Final = 0
MAX_CUSTOM_SCORE: Final = 10
MAX_RESOURCE_WEIGHT: Final = 100


def validate_fit_args(args: NodeResourcesFitArgs) -> None:
    errs: list[str] = []
    for i, group in enumerate(args.ignored_resource_groups):
        if "/" in group:
            errs.append(f"ignoredResourceGroups[{i}]: resource group name can't contain '/'")
    s = args.scoring_strategy
    if s.type not in SUPPORTED_STRATEGIES:
        errs.append(f"scoringStrategy.type: Unsupported value: {s.type!r}")
    for i, r in enumerate(s.resources):
        if r.weight <= 0 or r.weight > MAX_RESOURCE_WEIGHT:
            errs.append(
                f"scoringStrategy.resources[{i}].weight: Invalid value: {r.weight}: "
                f"resource weight of {r.name} not in valid range (0, 100]"
            )
    if s.type == REQUESTED_TO_CAPACITY_RATIO:
        errs.extend(_shape_errors(s))
    if errs:
        raise ValueError("; ".join(errs))


def _shape_errors(s: ScoringStrategy) -> list[str]:
    shape = s.shape
    if not shape:
        return ["scoringStrategy.shape: Required value: at least one point must be specified"]
    errs: list[str] = []
    for i in range(1, len(shape)):
        if shape[i - 1].utilization >= shape[i].utilization:
            errs.append(
                f"scoringStrategy.shape[{i}].utilization: Invalid value: {shape[i].utilization}: "
                "values must be sorted in increasing order"
            )
            break
    for i, p in enumerate(shape):
        if not MIN_UTILIZATION <= p.utilization <= MAX_UTILIZATION:
            errs.append(
                f"scoringStrategy.shape[{i}].utilization: Invalid value: {p.utilization}: "
                "not in valid range [0, 100]"
            )
        if not MIN_CUSTOM_SCORE <= p.score <= MAX_CUSTOM_SCORE:
            errs.append(
                f"scoringStrategy.shape[{i}].score: Invalid value: {p.score}: "
                "not in valid range [0, 10]"
            )
    return errs


def validate_balanced_allocation_args(args: NodeResourcesBalancedAllocationArgs) -> None:
    errs: list[str] = []
    seen: set[str] = set()
    for i, r in enumerate(args.resources):
        if r.name in seen:
            errs.append(f"resources[{i}].name: Duplicate value: {r.name!r}")
        seen.add(r.name)
        if r.weight != 1:
            errs.append(f"resources[{i}].weight: Invalid value: {r.weight}: must be 1")
    if errs:
        raise ValueError("; ".join(errs))
