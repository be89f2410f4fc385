"""The in-tree registry: upstream plugin name -> factory, for the plugins kubesched implements.

NodeDeclaredFeatures (not implemented) is dropped from the default profile: it
skips pods without declared-feature requirements, changing no decision or message.
DynamicResources is modelled for pods without claims (its PostFilter shows in
FailedScheduling messages).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from kubesched.plugins.defaultbinder import DefaultBinder
from kubesched.plugins.defaultpreemption import DefaultPreemption
from kubesched.plugins.dynamicresources import DynamicResources
from kubesched.plugins.imagelocality import ImageLocality
from kubesched.plugins.interpodaffinity import InterPodAffinity
from kubesched.plugins.nodeaffinity import NodeAffinity
from kubesched.plugins.nodename import NodeName
from kubesched.plugins.nodeports import NodePorts
from kubesched.plugins.noderesources.balanced_allocation import BalancedAllocation
from kubesched.plugins.noderesources.fit import Fit
from kubesched.plugins.nodeunschedulable import NodeUnschedulable
from kubesched.plugins.nodevolumelimits import NodeVolumeLimits
from kubesched.plugins.podtopologyspread import PodTopologySpread
from kubesched.plugins.queuesort import PrioritySort
from kubesched.plugins.schedulinggates import SchedulingGates
from kubesched.plugins.tainttoleration import TaintToleration
from kubesched.plugins.volumebinding import VolumeBinding
from kubesched.plugins.volumerestrictions import VolumeRestrictions
from kubesched.plugins.volumezone import VolumeZone
from kubesched.runtime.framework import PluginFactory

_PLUGINS: tuple[Any, ...] = (
    SchedulingGates,
    PrioritySort,
    NodeUnschedulable,
    NodeName,
    TaintToleration,
    NodeAffinity,
    NodePorts,
    Fit,
    VolumeRestrictions,
    NodeVolumeLimits,
    VolumeBinding,
    VolumeZone,
    PodTopologySpread,
    InterPodAffinity,
    BalancedAllocation,
    ImageLocality,
    DynamicResources,
    DefaultPreemption,
    DefaultBinder,
)


FEATURE_GATES: Mapping[str, bool] = {"SchedulerAsyncPreemption": True}
"""The feature gates kubesched honours, with their v1.36 defaults."""


def parse_feature_gates(text: str) -> dict[str, bool]:
    """``A=true,B=false`` as kube-scheduler's ``--feature-gates``; ValueError on bad input."""
    gates: dict[str, bool] = {}
    for item in filter(None, (p.strip() for p in text.split(","))):
        name, sep, value = item.partition("=")
        if not sep or value.lower() not in ("true", "false"):
            raise ValueError(f"invalid value of {item}, err: expected NAME=true|false")
        if name not in FEATURE_GATES:
            raise ValueError(f"unrecognized feature gate: {name}")
        gates[name] = value.lower() == "true"
    return gates


def in_tree_registry(
    feature_gates: Mapping[str, bool] | None = None,
) -> Mapping[str, PluginFactory]:
    """Plugin name -> factory ``(args, handle) -> plugin``."""
    gates = {**FEATURE_GATES, **(feature_gates or {})}
    registry: dict[str, PluginFactory] = {cls.name: cls for cls in _PLUGINS}
    registry[DefaultPreemption.name] = functools.partial(
        DefaultPreemption, async_preemption=gates["SchedulerAsyncPreemption"]
    )
    return registry
