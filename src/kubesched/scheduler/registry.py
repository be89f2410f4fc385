"""The in-tree registry: upstream plugin name -> factory, for the plugins kubesched implements.

Upstream default-profile plugins that kubesched does not implement (volume
and DRA plugins, NodeDeclaredFeatures) are dropped from the default profile:
they have nothing to do for pods without volumes or resource claims.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubesched.plugins.defaultbinder import DefaultBinder
from kubesched.plugins.defaultpreemption import DefaultPreemption
from kubesched.plugins.imagelocality import ImageLocality
from kubesched.plugins.nodeaffinity import NodeAffinity
from kubesched.plugins.nodename import NodeName
from kubesched.plugins.nodeports import NodePorts
from kubesched.plugins.noderesources.balanced_allocation import BalancedAllocation
from kubesched.plugins.noderesources.fit import Fit
from kubesched.plugins.nodeunschedulable import NodeUnschedulable
from kubesched.plugins.queuesort import PrioritySort
from kubesched.plugins.schedulinggates import SchedulingGates
from kubesched.plugins.tainttoleration import TaintToleration
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
    BalancedAllocation,
    ImageLocality,
    DefaultPreemption,
    DefaultBinder,
)


def in_tree_registry() -> Mapping[str, PluginFactory]:
    """Plugin name -> factory ``(args, handle) -> plugin``."""
    return {cls.name: cls for cls in _PLUGINS}
