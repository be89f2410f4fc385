"""The default profile with the volume plugins, as upstream v1.36's
getDefaultPlugins expands it (pkg/scheduler/apis/config/v1/default_plugins.go:
VolumeRestrictions, NodeVolumeLimits, VolumeBinding, VolumeZone after
NodeResourcesFit; multiPoint enables each at every point it implements; a
multiPoint plugin without a weight scores with weight 1)."""

from __future__ import annotations

from kubesched.scheduler.config import default_config
from kubesched.scheduler.registry import in_tree_registry


def test_default_profile_runs_the_volume_plugins_in_upstream_order() -> None:
    prof = default_config(supported=in_tree_registry().keys()).profiles[0]
    names = {pt: [r.name for r in prof.enabled(pt)] for pt in prof.plugins}
    assert names["preFilter"] == [
        "NodeAffinity",
        "NodePorts",
        "NodeResourcesFit",
        "VolumeRestrictions",
        "NodeVolumeLimits",
        "VolumeBinding",
        "VolumeZone",
        "PodTopologySpread",
        "InterPodAffinity",
        "DynamicResources",
    ]
    assert names["filter"] == [
        "NodeUnschedulable",
        "NodeName",
        "TaintToleration",
        "NodeAffinity",
        "NodePorts",
        "NodeResourcesFit",
        "VolumeRestrictions",
        "NodeVolumeLimits",
        "VolumeBinding",
        "VolumeZone",
        "PodTopologySpread",
        "InterPodAffinity",
        "DynamicResources",
    ]
    assert names["reserve"] == ["VolumeBinding", "DynamicResources"]
    assert names["preBind"] == ["VolumeBinding", "DynamicResources"]
    assert "VolumeBinding" in names["preScore"]
    weights = {r.name: r.weight for r in prof.enabled("score")}
    assert weights["VolumeBinding"] == 1
    for plugin in ("VolumeRestrictions", "NodeVolumeLimits", "VolumeZone"):
        assert plugin not in weights
