"""KubeSchedulerConfiguration v1: defaults, plugin merging, multiPoint expansion, validation.

Upstream sources re-expressed here (kubernetes/kubernetes, v1.36):
- pkg/scheduler/apis/config/testing/defaults/defaults.go ``ExpandedPluginsV1`` and
  pkg/scheduler/apis/config/v1/defaults_test.go ``TestSchedulerDefaults`` (default set,
  here with v1.36's default gates: DynamicResources with weight 2, NodeDeclaredFeatures);
- pkg/scheduler/apis/config/v1/default_plugins_test.go ``TestMergePlugins``;
- pkg/scheduler/framework/runtime/framework_test.go ``TestNewFrameworkMultiPointExpansion``;
- pkg/scheduler/apis/config/v1/defaults_test.go ``TestPluginArgsDefaults``;
- pkg/scheduler/apis/config/validation/validation_test.go and validation_pluginargs_test.go.
"""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.api.errors import InputError
from kubesched.api.types import LABEL_HOSTNAME, LABEL_ZONE
from kubesched.framework.config import (
    EXTENSION_POINTS,
    DefaultPreemptionArgs,
    InterPodAffinityArgs,
    NodeAffinityArgs,
    NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs,
    PluginRef,
    PodTopologySpreadArgs,
    Profile,
    ResourceSpec,
    ScoringStrategy,
    UtilizationShapePoint,
    VolumeBindingArgs,
)
from kubesched.scheduler.config import (
    DEFAULT_PLUGINS,
    PLUGIN_POINTS,
    SYSTEM_DEFAULT_CONSTRAINTS,
    default_config,
    parse_config,
)
from kubesched.scheduler.config.plugins import RawPlugin, RawPluginSet, merge_plugins

API = "kubescheduler.config.k8s.io/v1"

# The plugins kubesched implements (VolumeBinding, DynamicResources, ... are upstream-only).
KUBESCHED = frozenset(
    {
        "SchedulingGates",
        "PrioritySort",
        "NodeUnschedulable",
        "NodeName",
        "TaintToleration",
        "NodeAffinity",
        "NodePorts",
        "NodeResourcesFit",
        "PodTopologySpread",
        "InterPodAffinity",
        "DefaultPreemption",
        "NodeResourcesBalancedAllocation",
        "ImageLocality",
        "DefaultBinder",
    }
)


def doc(**fields: Any) -> dict[str, Any]:
    return {"apiVersion": API, "kind": "KubeSchedulerConfiguration", **fields}


def one(**profile: Any) -> dict[str, Any]:
    """A document with a single profile."""
    return doc(profiles=[profile])


def names(profile: Profile, point: str) -> list[str]:
    return [r.name for r in profile.enabled(point)]


def scores(profile: Profile) -> list[tuple[str, int]]:
    return [(r.name, r.weight) for r in profile.enabled("score")]


# --------------------------------------------------------------------------- defaults

EXPANDED_DEFAULTS: dict[str, list[str]] = {
    "preEnqueue": ["SchedulingGates", "DynamicResources", "DefaultPreemption"],
    "queueSort": ["PrioritySort"],
    "preFilter": [
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
        "NodeDeclaredFeatures",
    ],
    "filter": [
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
        "NodeDeclaredFeatures",
    ],
    "postFilter": ["DynamicResources", "DefaultPreemption"],
    "preScore": [
        "TaintToleration",
        "NodeAffinity",
        "NodeResourcesFit",
        "VolumeBinding",
        "PodTopologySpread",
        "InterPodAffinity",
        "NodeResourcesBalancedAllocation",
    ],
    "score": [],  # checked with weights below
    "reserve": ["VolumeBinding", "DynamicResources"],
    "permit": [],
    "preBind": ["VolumeBinding", "DynamicResources"],
    "bind": ["DefaultBinder"],
    "postBind": [],
}
DEFAULT_SCORES = [
    ("TaintToleration", 3),
    ("NodeAffinity", 2),
    ("NodeResourcesFit", 1),
    ("VolumeBinding", 1),
    ("PodTopologySpread", 2),
    ("InterPodAffinity", 2),
    ("DynamicResources", 2),
    ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
]


@pytest.mark.parametrize(
    "point",
    [pytest.param(p, id=f"ExpandedPluginsV1/{p}") for p in EXPANDED_DEFAULTS if p != "score"],
)
def test_default_plugins_per_extension_point(point: str) -> None:
    profile = default_config().profiles[0]
    assert names(profile, point) == EXPANDED_DEFAULTS[point]
    assert all(r.weight == 0 for r in profile.enabled(point))


def test_default_score_plugins_and_weights() -> None:
    """ExpandedPluginsV1/score: multiPoint weights, 1 for a plugin without one (VolumeBinding)."""
    assert scores(default_config().profiles[0]) == DEFAULT_SCORES


def test_default_multi_point_list_is_upstreams() -> None:
    """TestSchedulerDefaults/two profiles: getDefaultPlugins() with v1.36's default gates."""
    assert [n for n, _ in DEFAULT_PLUGINS] == [
        "SchedulingGates",
        "PrioritySort",
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
        "DefaultPreemption",
        "NodeResourcesBalancedAllocation",
        "ImageLocality",
        "DefaultBinder",
        "NodeDeclaredFeatures",
    ]
    assert all(n in PLUGIN_POINTS for n, _ in DEFAULT_PLUGINS)


def test_default_globals_and_args() -> None:
    """TestSchedulerDefaults/empty config: scalars and PluginConfigsV1."""
    cfg = default_config()
    assert (cfg.percentage_of_nodes_to_score, cfg.parallelism) == (0, 16)
    assert (cfg.pod_initial_backoff_seconds, cfg.pod_max_backoff_seconds) == (1, 10)
    (profile,) = cfg.profiles
    assert profile.scheduler_name == "default-scheduler"
    assert profile.percentage_of_nodes_to_score is None
    cpu_mem = (ResourceSpec("cpu", 1), ResourceSpec("memory", 1))
    assert profile.plugin_args == {
        "DefaultPreemption": DefaultPreemptionArgs(10, 100),
        "InterPodAffinity": InterPodAffinityArgs(1, False),
        "NodeAffinity": NodeAffinityArgs(None),
        "NodeResourcesBalancedAllocation": NodeResourcesBalancedAllocationArgs(cpu_mem),
        "NodeResourcesFit": NodeResourcesFitArgs(
            (), (), ScoringStrategy("LeastAllocated", cpu_mem)
        ),
        "PodTopologySpread": PodTopologySpreadArgs((), "System"),
        "VolumeBinding": VolumeBindingArgs(600),
    }


def test_empty_document_equals_default_config() -> None:
    assert parse_config(doc()) == default_config()
    assert parse_config(doc(profiles=[])) == default_config()


def test_supported_drops_upstream_only_plugins_from_the_default_set() -> None:
    profile = default_config(supported=KUBESCHED).profiles[0]
    assert names(profile, "preEnqueue") == ["SchedulingGates", "DefaultPreemption"]
    assert names(profile, "preFilter") == [
        "NodeAffinity",
        "NodePorts",
        "NodeResourcesFit",
        "PodTopologySpread",
        "InterPodAffinity",
    ]
    assert names(profile, "filter") == [
        "NodeUnschedulable",
        "NodeName",
        "TaintToleration",
        "NodeAffinity",
        "NodePorts",
        "NodeResourcesFit",
        "PodTopologySpread",
        "InterPodAffinity",
    ]
    assert names(profile, "postFilter") == ["DefaultPreemption"]
    assert scores(profile) == [
        ("TaintToleration", 3),
        ("NodeAffinity", 2),
        ("NodeResourcesFit", 1),
        ("PodTopologySpread", 2),
        ("InterPodAffinity", 2),
        ("NodeResourcesBalancedAllocation", 1),
        ("ImageLocality", 1),
    ]
    for point in ("reserve", "preBind", "permit", "postBind"):
        assert names(profile, point) == []


def test_system_default_constraints() -> None:
    """podtopologyspread/plugin.go systemDefaultConstraints."""
    got = [(c.topology_key, c.max_skew, c.when_unsatisfiable) for c in SYSTEM_DEFAULT_CONSTRAINTS]
    assert got == [(LABEL_HOSTNAME, 3, "ScheduleAnyway"), (LABEL_ZONE, 5, "ScheduleAnyway")]


def test_every_profile_has_every_extension_point() -> None:
    assert set(default_config().profiles[0].plugins) == set(EXTENSION_POINTS)


# --------------------------------------------------------------------------- mergePlugins


def pset(enabled: list[Any] | None = None, disabled: list[str] | None = None) -> RawPluginSet:
    def plugin(p: Any) -> RawPlugin:
        return RawPlugin(p[0], p[1]) if isinstance(p, tuple) else RawPlugin(p)

    return RawPluginSet(tuple(plugin(p) for p in enabled or ()), tuple(disabled or ()))


def plugins_of(**sets: RawPluginSet) -> dict[str, RawPluginSet]:
    out = {k: RawPluginSet() for k in ("multiPoint", *EXTENSION_POINTS)}
    out.update(sets)
    return out


def flat(s: RawPluginSet) -> tuple[list[Any], list[str]]:
    return [(p.name, p.weight) if p.weight is not None else p.name for p in s.enabled], list(
        s.disabled
    )


@pytest.mark.parametrize(
    ("key", "default", "custom", "want"),
    [
        pytest.param(
            "filter",
            pset(["DefaultPlugin1", "DefaultPlugin2"]),
            pset(["CustomPlugin"]),
            (["DefaultPlugin1", "DefaultPlugin2", "CustomPlugin"], []),
            id="TestMergePlugins/AppendCustomPlugin",
        ),
        pytest.param(
            "filter",
            pset(["DefaultPlugin1", "DefaultPlugin2"]),
            pset(["CustomPlugin", "DefaultPlugin2"], ["DefaultPlugin2"]),
            (["DefaultPlugin1", "CustomPlugin", "DefaultPlugin2"], ["DefaultPlugin2"]),
            id="TestMergePlugins/InsertAfterDefaultPlugins2",
        ),
        pytest.param(
            "filter",
            pset(["DefaultPlugin1", "DefaultPlugin2"]),
            pset(["CustomPlugin", "DefaultPlugin1", "DefaultPlugin2"], ["*"]),
            (["CustomPlugin", "DefaultPlugin1", "DefaultPlugin2"], ["*"]),
            id="TestMergePlugins/InsertBeforeAllPlugins",
        ),
        pytest.param(
            "filter",
            pset(["DefaultPlugin1", "DefaultPlugin2"]),
            pset(["DefaultPlugin2", "DefaultPlugin1"], ["*"]),
            (["DefaultPlugin2", "DefaultPlugin1"], ["*"]),
            id="TestMergePlugins/ReorderDefaultPlugins",
        ),
        pytest.param(
            "filter",
            pset(["Plugin1", "Plugin2", "Plugin3"]),
            pset([("Plugin1", 2), ("Plugin3", 3)]),
            ([("Plugin1", 2), "Plugin2", ("Plugin3", 3)], []),
            id="TestMergePlugins/CustomPluginOverrideDefaultPlugin",
        ),
        pytest.param(
            "filter",
            pset(["Plugin1", "Plugin2", "Plugin3"]),
            pset([("Plugin2", 2), ("Plugin1", 1)]),
            ([("Plugin1", 1), ("Plugin2", 2), "Plugin3"], []),
            id="TestMergePlugins/OrderPreserveAfterOverride",
        ),
        pytest.param(
            "filter",
            pset(["Plugin1", "Plugin2", "Plugin3"]),
            pset(["Plugin1", ("Plugin2", 2), "Plugin3", ("Plugin2", 4)]),
            (["Plugin1", ("Plugin2", 4), "Plugin3", ("Plugin2", 2)], []),
            id="TestMergePlugins/RepeatedCustomPlugin",
        ),
        pytest.param(
            "multiPoint",
            pset(["DefaultPlugin1", "DefaultPlugin2"]),
            pset(["CustomPlugin"]),
            (["DefaultPlugin1", "DefaultPlugin2", "CustomPlugin"], []),
            id="TestMergePlugins/Append custom MultiPoint plugin",
        ),
        pytest.param(
            "multiPoint",
            pset(["DefaultPlugin1", "DefaultPlugin2"]),
            pset(["CustomPlugin", "CustomPlugin2"], ["DefaultPlugin2"]),
            (["DefaultPlugin1", "CustomPlugin", "CustomPlugin2"], ["DefaultPlugin2"]),
            id="TestMergePlugins/Append disabled Multipoint plugins",
        ),
        pytest.param(
            "multiPoint",
            pset(["DefaultPlugin"]),
            pset([("DefaultPlugin", 5)]),
            ([("DefaultPlugin", 5)], []),
            id="TestMergePlugins/override default MultiPoint plugins with custom value",
        ),
        pytest.param(
            "multiPoint",
            pset(["DefaultPlugin"], ["DefaultPlugin2"]),
            pset(["CustomPlugin"]),
            (["DefaultPlugin", "CustomPlugin"], ["DefaultPlugin2"]),
            id="TestMergePlugins/disabled MultiPoint plugin in default set",
        ),
        pytest.param(
            "multiPoint",
            pset(["DefaultPlugin"]),
            pset(None, ["DefaultPlugin"]),
            ([], ["DefaultPlugin"]),
            id="TestMergePlugins/multipoint with only disabled gets merged",
        ),
    ],
)
def test_merge_plugins(
    key: str, default: RawPluginSet, custom: RawPluginSet, want: tuple[list[Any], list[str]]
) -> None:
    merged = merge_plugins(plugins_of(**{key: default}), plugins_of(**{key: custom}))
    assert flat(merged[key]) == want


def test_merge_without_custom_plugins_keeps_defaults() -> None:
    """TestMergePlugins/ApplyNilCustomPlugin."""
    defaults = plugins_of(filter=pset(["DefaultPlugin1", "DefaultPlugin2"]))
    assert flat(merge_plugins(defaults, None)["filter"]) == (
        ["DefaultPlugin1", "DefaultPlugin2"],
        [],
    )


# --------------------------------------------------------------------------- multiPoint expansion

DEFAULT_FILTER = EXPANDED_DEFAULTS["filter"]


@pytest.mark.parametrize(
    ("plugins", "point", "want"),
    [
        pytest.param(
            {
                "preScore": {"disabled": [{"name": "TaintToleration"}]},
                "score": {"disabled": [{"name": "TaintToleration"}]},
            },
            "score",
            [n for n, _ in DEFAULT_SCORES if n != "TaintToleration"],
            id="TestNewFrameworkMultiPointExpansion/"
            "disable MultiPoint plugin at some extension points",
        ),
        pytest.param(
            {"preScore": {"disabled": [{"name": "*"}]}},
            "preScore",
            [],
            id="TestNewFrameworkMultiPointExpansion/disable MultiPoint extension",
        ),
        pytest.param(
            {"preScore": {"disabled": [{"name": "*"}]}},
            "score",
            [n for n, _ in DEFAULT_SCORES],
            id="disabling every plugin at one point leaves the other points expanded",
        ),
        pytest.param(
            {"score": {"enabled": [{"name": "ImageLocality"}, {"name": "NodeAffinity"}]}},
            "score",
            ["ImageLocality", "NodeAffinity"]
            + [n for n, _ in DEFAULT_SCORES if n not in ("ImageLocality", "NodeAffinity")],
            id="TestNewFrameworkMultiPointExpansion/Reorder MultiPoint plugins "
            "(specified extension takes precedence)",
        ),
        pytest.param(
            {
                "filter": {
                    "disabled": [{"name": "*"}],
                    "enabled": [{"name": "NodeName"}, {"name": "NodeUnschedulable"}],
                }
            },
            "filter",
            ["NodeName", "NodeUnschedulable"],
            id="'*' at a point keeps only the point's own list, in its order",
        ),
        pytest.param(
            {"filter": {"disabled": [{"name": "NodeName"}], "enabled": [{"name": "NodeName"}]}},
            "filter",
            [n for n in DEFAULT_FILTER if n != "NodeName"] + ["NodeName"],
            id="re-enabling a plugin disabled at its point moves it after the multiPoint plugins",
        ),
        pytest.param(
            {"multiPoint": {"disabled": [{"name": "TaintToleration"}]}},
            "filter",
            [n for n in DEFAULT_FILTER if n != "TaintToleration"],
            id="multiPoint disabled drops a default plugin from every point",
        ),
        pytest.param(
            {"multiPoint": {"disabled": [{"name": "NodeName"}], "enabled": [{"name": "NodeName"}]}},
            "filter",
            [n for n in DEFAULT_FILTER if n != "NodeName"] + ["NodeName"],
            id="TestNewFrameworkMultiPointExpansion/disable and enable MultiPoint plugin by name",
        ),
        pytest.param(
            {"multiPoint": {"enabled": [{"name": "GangScheduling"}]}},
            "permit",
            ["GangScheduling"],
            id="a non-default in-tree plugin enabled through multiPoint lands at its points",
        ),
    ],
)
def test_multi_point_expansion(plugins: dict[str, Any], point: str, want: list[str]) -> None:
    assert names(parse_config(one(plugins=plugins)).profiles[0], point) == want


def test_multi_point_disable_all_and_enable_some() -> None:
    """TestNewFrameworkMultiPointExpansion/disable and enable MultiPoint plugins with '*'."""
    plugins = {
        "multiPoint": {
            "disabled": [{"name": "*"}],
            "enabled": [
                {"name": "PrioritySort"},
                {"name": "DefaultBinder"},
                {"name": "ImageLocality"},
            ],
        }
    }
    profile = parse_config(one(plugins=plugins)).profiles[0]
    got = {p: names(profile, p) for p in EXTENSION_POINTS if names(profile, p)}
    assert got == {
        "queueSort": ["PrioritySort"],
        "score": ["ImageLocality"],
        "bind": ["DefaultBinder"],
    }
    assert scores(profile) == [("ImageLocality", 1)]


@pytest.mark.parametrize(
    ("plugins", "want"),
    [
        pytest.param(
            {
                "score": {
                    "enabled": [
                        {"name": "ImageLocality", "weight": 5},
                        {"name": "TaintToleration", "weight": 7},
                    ]
                }
            },
            [("ImageLocality", 5), ("TaintToleration", 7)]
            + [s for s in DEFAULT_SCORES if s[0] not in ("ImageLocality", "TaintToleration")],
            id="TestNewFrameworkMultiPointExpansion/Override MultiPoint plugins weights",
        ),
        pytest.param(
            {"score": {"enabled": [{"name": "NodeAffinity"}]}},
            [("NodeAffinity", 1)] + [s for s in DEFAULT_SCORES if s[0] != "NodeAffinity"],
            id="an explicit score entry without weight scores with 1, not the multiPoint weight",
        ),
        pytest.param(
            {"multiPoint": {"enabled": [{"name": "TaintToleration", "weight": 10}]}},
            [("TaintToleration", 10), *DEFAULT_SCORES[1:]],
            id="re-configuring a default multiPoint plugin keeps its place with the new weight",
        ),
        pytest.param(
            {"multiPoint": {"enabled": [{"name": "TaintToleration"}]}},
            [("TaintToleration", 1), *DEFAULT_SCORES[1:]],
            id="re-configuring a default multiPoint plugin without weight resets it to 1",
        ),
        pytest.param(
            {"score": {"enabled": [{"name": "ImageLocality", "weight": 0}]}},
            [("ImageLocality", 1)] + [s for s in DEFAULT_SCORES if s[0] != "ImageLocality"],
            id="a zero weight means 1",
        ),
        pytest.param(
            {
                "score": {
                    "disabled": [{"name": "*"}],
                    "enabled": [{"name": "NodeResourcesFit", "weight": 4}],
                }
            },
            [("NodeResourcesFit", 4)],
            id="score '*' disabled with one explicit plugin",
        ),
    ],
)
def test_score_weights(plugins: dict[str, Any], want: list[tuple[str, int]]) -> None:
    assert scores(parse_config(one(plugins=plugins)).profiles[0]) == want


# --------------------------------------------------------------------------- args defaults


@pytest.mark.parametrize(
    ("name", "args", "want"),
    [
        pytest.param(
            "DefaultPreemption",
            {},
            DefaultPreemptionArgs(10, 100),
            id="TestPluginArgsDefaults/DefaultPreemptionArgs empty",
        ),
        pytest.param(
            "DefaultPreemption",
            {"minCandidateNodesPercentage": 50},
            DefaultPreemptionArgs(50, 100),
            id="TestPluginArgsDefaults/DefaultPreemptionArgs with value",
        ),
        pytest.param(
            "VolumeBinding",
            {},
            VolumeBindingArgs(600),
            id="TestPluginArgsDefaults/VolumeBindingArgs empty",
        ),
        pytest.param(
            "VolumeBinding",
            {"bindTimeoutSeconds": 5},
            VolumeBindingArgs(5),
            id="TestPluginArgsDefaults/VolumeBindingArgs with value",
        ),
        pytest.param(
            "VolumeBinding",
            {"bindTimeoutSeconds": 0},
            VolumeBindingArgs(0),
            id="VolumeBindingArgs zero stays zero",
        ),
        pytest.param(
            "InterPodAffinity",
            {},
            InterPodAffinityArgs(1),
            id="TestPluginArgsDefaults/InterPodAffinityArgs empty",
        ),
        pytest.param(
            "InterPodAffinity",
            {"hardPodAffinityWeight": 0},
            InterPodAffinityArgs(0),
            id="TestPluginArgsDefaults/InterPodAffinityArgs explicit 0",
        ),
        pytest.param(
            "InterPodAffinity",
            {"hardPodAffinityWeight": 5, "ignorePreferredTermsOfExistingPods": True},
            InterPodAffinityArgs(5, True),
            id="TestPluginArgsDefaults/InterPodAffinityArgs with value",
        ),
        pytest.param(
            "NodeResourcesBalancedAllocation",
            {},
            NodeResourcesBalancedAllocationArgs(
                (ResourceSpec("cpu", 1), ResourceSpec("memory", 1))
            ),
            id="TestPluginArgsDefaults/NodeResourcesBalancedAllocationArgs resources empty",
        ),
        pytest.param(
            "NodeResourcesBalancedAllocation",
            {
                "resources": [
                    {"name": "cpu"},
                    {"name": "scalar.io/scalar0"},
                    {"name": "scalar.io/scalar1", "weight": 1},
                ]
            },
            NodeResourcesBalancedAllocationArgs(
                (
                    ResourceSpec("cpu", 1),
                    ResourceSpec("scalar.io/scalar0", 1),
                    ResourceSpec("scalar.io/scalar1", 1),
                )
            ),
            id="TestPluginArgsDefaults/NodeResourcesBalancedAllocationArgs have resource no weight",
        ),
        pytest.param(
            "PodTopologySpread",
            {},
            PodTopologySpreadArgs((), "System"),
            id="TestPluginArgsDefaults/PodTopologySpreadArgs resources empty",
        ),
        pytest.param(
            "NodeResourcesFit",
            {},
            NodeResourcesFitArgs(
                scoring_strategy=ScoringStrategy(
                    "LeastAllocated", (ResourceSpec("cpu", 1), ResourceSpec("memory", 1))
                )
            ),
            id="TestPluginArgsDefaults/NodeResourcesFitArgs not set",
        ),
        pytest.param(
            "NodeResourcesFit",
            {"scoringStrategy": {"type": "MostAllocated"}},
            NodeResourcesFitArgs(
                scoring_strategy=ScoringStrategy(
                    "MostAllocated", (ResourceSpec("cpu", 1), ResourceSpec("memory", 1))
                )
            ),
            id="TestPluginArgsDefaults/NodeResourcesFitArgs Resources empty",
        ),
        pytest.param(
            "NodeResourcesFit",
            {
                "ignoredResources": ["example.com/foo"],
                "ignoredResourceGroups": ["example.com"],
                "scoringStrategy": {
                    "type": "RequestedToCapacityRatio",
                    "resources": [{"name": "cpu", "weight": 3}, {"name": "memory", "weight": 0}],
                    "requestedToCapacityRatio": {
                        "shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]
                    },
                },
            },
            NodeResourcesFitArgs(
                ("example.com/foo",),
                ("example.com",),
                ScoringStrategy(
                    "RequestedToCapacityRatio",
                    (ResourceSpec("cpu", 3), ResourceSpec("memory", 1)),
                    (UtilizationShapePoint(0, 0), UtilizationShapePoint(100, 10)),
                ),
            ),
            id="NodeResourcesFitArgs RequestedToCapacityRatio with shape, zero weight defaulted",
        ),
    ],
)
def test_plugin_args_defaults(name: str, args: dict[str, Any], want: object) -> None:
    cfg = parse_config(one(pluginConfig=[{"name": name, "args": args}]))
    assert cfg.profiles[0].plugin_args[name] == want


def test_pod_topology_spread_list_defaulting_keeps_constraints() -> None:
    """TestPluginArgsDefaults/PodTopologySpreadArgs resources with value (List)."""
    args = {
        "defaultingType": "List",
        "defaultConstraints": [
            {"topologyKey": "planet", "whenUnsatisfiable": "DoNotSchedule", "maxSkew": 2}
        ],
    }
    got = parse_config(one(pluginConfig=[{"name": "PodTopologySpread", "args": args}]))
    pts = got.profiles[0].plugin_args["PodTopologySpread"]
    assert isinstance(pts, PodTopologySpreadArgs)
    assert pts.defaulting_type == "List"
    assert [
        (c.topology_key, c.when_unsatisfiable, c.max_skew) for c in pts.default_constraints
    ] == [("planet", "DoNotSchedule", 2)]


def test_node_affinity_added_affinity_is_read() -> None:
    added = {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [
                {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a", "b"]}]}
            ]
        },
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {
                "weight": 7,
                "preference": {
                    "matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]
                },
            }
        ],
    }
    cfg = parse_config(
        one(pluginConfig=[{"name": "NodeAffinity", "args": {"addedAffinity": added}}])
    )
    args = cfg.profiles[0].plugin_args["NodeAffinity"]
    assert isinstance(args, NodeAffinityArgs) and args.added_affinity is not None
    assert args.added_affinity.required is not None
    (term,) = args.added_affinity.required.terms
    assert [(r.key, r.operator, r.values) for r in term.match_expressions] == [
        ("zone", "In", ("a", "b"))
    ]
    (pref,) = args.added_affinity.preferred
    assert pref.weight == 7
    assert [(r.key, r.values) for r in pref.preference.match_fields] == [("metadata.name", ("n1",))]


def test_args_with_kind_and_api_version_are_accepted() -> None:
    args = {"kind": "DefaultPreemptionArgs", "apiVersion": API, "minCandidateNodesAbsolute": 7}
    cfg = parse_config(one(pluginConfig=[{"name": "DefaultPreemption", "args": args}]))
    assert cfg.profiles[0].plugin_args["DefaultPreemption"] == DefaultPreemptionArgs(10, 7)


def test_args_of_disabled_plugins_are_not_kept() -> None:
    plugins = {"multiPoint": {"disabled": [{"name": "InterPodAffinity"}]}}
    cfg = parse_config(
        one(plugins=plugins, pluginConfig=[{"name": "InterPodAffinity", "args": {}}])
    )
    assert "InterPodAffinity" not in cfg.profiles[0].plugin_args


def test_args_of_plugins_without_args_kind_are_ignored() -> None:
    """TestSchedulerDefaults/two profiles: an unknown pluginConfig entry changes nothing."""
    cfg = parse_config(one(pluginConfig=[{"name": "FooPlugin", "args": {"anything": 1}}]))
    assert cfg == default_config()


# --------------------------------------------------------------------------- globals & profiles


@pytest.mark.parametrize(
    ("raw", "global_pct", "profile_pct"),
    [
        pytest.param(
            doc(percentageOfNodesToScore=50),
            50,
            None,
            id="TestSchedulerDefaults/set non default global percentageOfNodesToScore",
        ),
        pytest.param(
            one(percentageOfNodesToScore=50),
            0,
            50,
            id="TestSchedulerDefaults/set non default profile percentageOfNodesToScore",
        ),
        pytest.param(
            doc(percentageOfNodesToScore=10, profiles=[{"percentageOfNodesToScore": 50}]),
            10,
            50,
            id="TestSchedulerDefaults/set non default global and profile percentageOfNodesToScore",
        ),
    ],
)
def test_percentage_of_nodes_to_score(
    raw: dict[str, Any], global_pct: int, profile_pct: int | None
) -> None:
    cfg = parse_config(raw)
    assert cfg.percentage_of_nodes_to_score == global_pct
    assert cfg.profiles[0].percentage_of_nodes_to_score == profile_pct


def test_scalars_and_ignored_fields() -> None:
    """TestSchedulerDefaults/set non default parallelism; component-base sections are ignored."""
    cfg = parse_config(
        doc(
            parallelism=8,
            podInitialBackoffSeconds=2,
            podMaxBackoffSeconds=20,
            clientConnection={"kubeconfig": "/x"},
            leaderElection={"leaderElect": False},
            enableProfiling=False,
            delayCacheUntilActive=True,
            extenders=[],
        )
    )
    assert (cfg.parallelism, cfg.pod_initial_backoff_seconds, cfg.pod_max_backoff_seconds) == (
        8,
        2,
        20,
    )


def test_two_profiles_named_explicitly() -> None:
    cfg = parse_config(
        doc(
            profiles=[
                {"schedulerName": "default-scheduler"},
                {
                    "schedulerName": "no-scoring",
                    "plugins": {"score": {"disabled": [{"name": "*"}]}},
                },
            ]
        )
    )
    assert [p.scheduler_name for p in cfg.profiles] == ["default-scheduler", "no-scoring"]
    assert scores(cfg.profiles[1]) == []
    assert scores(cfg.profiles[0]) == DEFAULT_SCORES


# --------------------------------------------------------------------------- errors


def error_of(raw: dict[str, Any], supported: frozenset[str] | None = None) -> InputError:
    with pytest.raises(InputError) as info:
        parse_config(raw, source="cfg.yaml", supported=supported)
    return info.value


QS_DEFAULT = "config.PluginSet{Enabled:[]config.Plugin(nil), Disabled:[]config.Plugin(nil)}"
QS_PRIORITY = (
    'config.PluginSet{Enabled:[]config.Plugin{config.Plugin{Name:"PrioritySort", Weight:0}}, '
    "Disabled:[]config.Plugin(nil)}"
)


def pc(name: str, args: dict[str, Any]) -> dict[str, Any]:
    return one(pluginConfig=[{"name": name, "args": args}])


def fit(strategy: dict[str, Any] | None = None, **args: Any) -> dict[str, Any]:
    return pc("NodeResourcesFit", {**args, **({"scoringStrategy": strategy} if strategy else {})})


def pts(**args: Any) -> dict[str, Any]:
    return pc("PodTopologySpread", args)


def constraint(**c: Any) -> dict[str, Any]:
    return {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule", **c}


def node_affinity_expr(**req: Any) -> dict[str, Any]:
    term = {"matchExpressions": [{"key": "zone", **req}]}
    added = {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}
    return pc("NodeAffinity", {"addedAffinity": added})


P0 = "profiles[0]"
ARGS0 = "profiles[0].pluginConfig[0].args"
NA_REQ = (
    f"{ARGS0}.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
)
NAME_PART_MSG = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
    "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)

ERROR_CASES = [
    # ------------------------------------------------------------ document
    pytest.param(
        {"apiVersion": "kubescheduler.config.k8s.io/v1beta3", "kind": "KubeSchedulerConfiguration"},
        "apiVersion",
        'no kind "KubeSchedulerConfiguration" is registered for version '
        '"kubescheduler.config.k8s.io/v1beta3"',
        id="a removed apiVersion is rejected",
    ),
    pytest.param(
        {"apiVersion": API, "kind": "Pod"},
        "kind",
        'no kind "Pod" is registered for version "kubescheduler.config.k8s.io/v1"',
        id="a foreign kind is rejected",
    ),
    pytest.param(
        doc(percentageOfNodeToScore=5),
        "percentageOfNodeToScore",
        'strict decoding error: unknown field "percentageOfNodeToScore"',
        id="a misspelt top-level field is an error",
    ),
    pytest.param(
        one(plugin={}),
        "profiles[0].plugin",
        'strict decoding error: unknown field "plugin"',
        id="a misspelt profile field is an error",
    ),
    pytest.param(
        pc("DefaultPreemption", {"minCandidateNodes": 1}),
        f"{ARGS0}.minCandidateNodes",
        'strict decoding error: unknown field "minCandidateNodes"',
        id="a misspelt args field is an error",
    ),
    pytest.param(
        doc(percentageOfNodesToScore="50"),
        "percentageOfNodesToScore",
        "cannot unmarshal string into Go value of type int32",
        id="a string where an integer is expected is an error",
    ),
    pytest.param(
        one(plugins={"score": {"enabled": [{"name": "ImageLocality", "weight": 2**31}]}}),
        "profiles[0].plugins.score.enabled[0].weight",
        "cannot unmarshal number 2147483648 into Go value of type int32",
        id="a weight that does not fit int32 is an error",
    ),
    pytest.param(
        doc(extenders=[{"urlPrefix": "http://x"}]),
        "extenders",
        "scheduler extenders are not supported by kubesched",
        id="extenders are refused",
    ),
    pytest.param(
        pc("DefaultPreemption", {"kind": "InterPodAffinityArgs"}),
        f"{ARGS0}.kind",
        "args for plugin DefaultPreemption were not of type "
        "DefaultPreemptionArgs.kubescheduler.config.k8s.io, got "
        "InterPodAffinityArgs.kubescheduler.config.k8s.io",
        id="args of another kind are rejected",
    ),
    # ------------------------------------------------------------ global validation
    pytest.param(
        doc(parallelism=0),
        "parallelism",
        "Invalid value: 0: should be an integer value greater than zero",
        id="TestValidateKubeSchedulerConfigurationV1/bad-parallelism-invalid-value",
    ),
    pytest.param(
        doc(percentageOfNodesToScore=110),
        "percentageOfNodesToScore",
        "Invalid value: 110: not in valid range [0-100]",
        id="TestValidateKubeSchedulerConfigurationV1/bad-percentage-of-nodes-to-score",
    ),
    pytest.param(
        one(percentageOfNodesToScore=-1),
        "profiles[0].percentageOfNodesToScore",
        "Invalid value: -1: not in valid range [0-100]",
        id="TestValidateKubeSchedulerConfigurationV1/negative-profile-percentage-of-nodes-to-score",
    ),
    pytest.param(
        doc(podInitialBackoffSeconds=0),
        "podInitialBackoffSeconds",
        "Invalid value: 0: must be greater than 0",
        id="a non-positive initial backoff",
    ),
    pytest.param(
        doc(podInitialBackoffSeconds=30, podMaxBackoffSeconds=10),
        "podMaxBackoffSeconds",
        "Invalid value: 10: must be greater than or equal to PodInitialBackoffSeconds",
        id="a max backoff below the initial backoff",
    ),
    pytest.param(
        doc(profiles=[{"schedulerName": "a"}, {}]),
        "profiles[1].schedulerName",
        "Required value",
        id="TestValidateKubeSchedulerConfigurationV1/scheduler-name-not-set",
    ),
    pytest.param(
        doc(profiles=[{"schedulerName": "a"}, {"schedulerName": "a"}]),
        "profiles[1].schedulerName",
        "Duplicate value: profiles[0].schedulerName",
        id="TestValidateKubeSchedulerConfigurationV1/repeated-scheduler-name",
    ),
    pytest.param(
        doc(
            profiles=[
                {"schedulerName": "a"},
                {
                    "schedulerName": "b",
                    "plugins": {"queueSort": {"enabled": [{"name": "PrioritySort"}]}},
                },
            ]
        ),
        "profiles[1].plugins.queueSort",
        f"Invalid value: {QS_PRIORITY}: must be the same for all profiles",
        id="TestValidateKubeSchedulerConfigurationV1/one-empty-queue-sort",
    ),
    pytest.param(
        doc(
            profiles=[
                {
                    "schedulerName": "a",
                    "plugins": {"queueSort": {"enabled": [{"name": "PrioritySort"}]}},
                },
                {"schedulerName": "b"},
            ]
        ),
        "profiles[1].plugins.queueSort",
        f"Invalid value: {QS_DEFAULT}: must be the same for all profiles",
        id="queueSort sets are compared as configured, even when the effect is the same",
    ),
    pytest.param(
        doc(
            profiles=[
                {"schedulerName": "a", "pluginConfig": [{"name": "PrioritySort", "args": {}}]},
                {
                    "schedulerName": "b",
                    "pluginConfig": [{"name": "PrioritySort", "args": {"x": 1}}],
                },
            ]
        ),
        "profiles[1].plugins.queueSort",
        'different queue sort plugin args for profile "b"',
        id="profile.NewMap: queue sort args must be the same for all profiles",
    ),
    pytest.param(
        one(plugins={"filter": {"enabled": [{"name": "EBSLimits"}]}}),
        "profiles[0].plugins.filter.enabled[0]",
        'Invalid value: "EBSLimits": was invalid in version "kubescheduler.config.k8s.io/v1" '
        '(KubeSchedulerConfiguration is version "kubescheduler.config.k8s.io/v1")',
        id="a plugin removed from v1 (invalidPluginsByVersion)",
    ),
    pytest.param(
        pc("GCEPDLimits", {}),
        "profiles[0].pluginConfig[0]",
        'Invalid value: "GCEPDLimits": was invalid in version "kubescheduler.config.k8s.io/v1" '
        '(KubeSchedulerConfiguration is version "kubescheduler.config.k8s.io/v1")',
        id="a pluginConfig for a plugin removed from v1",
    ),
    pytest.param(
        one(pluginConfig=[{"name": "DefaultPreemption"}, {"name": "DefaultPreemption"}]),
        "profiles[0].pluginConfig[1]",
        'Duplicate value: "DefaultPreemption"',
        id="TestValidateKubeSchedulerConfigurationV1/duplicated-plugin-config",
    ),
    # ------------------------------------------------------------ framework construction
    pytest.param(
        one(plugins={"filter": {"enabled": [{"name": "Foo"}]}}),
        "profiles[0].plugins.filter.enabled[0]",
        'FilterPlugin "Foo" does not exist',
        id="an unknown plugin at a point does not exist",
    ),
    pytest.param(
        one(plugins={"multiPoint": {"enabled": [{"name": "Foo"}]}}),
        "profiles[0].plugins.multiPoint.enabled[0]",
        'PreFilterPlugin "Foo" does not exist',
        id="an unknown multiPoint plugin fails at the first point the framework builds",
    ),
    pytest.param(
        one(plugins={"filter": {"enabled": [{"name": "ImageLocality"}]}}),
        "profiles[0].plugins.filter.enabled[0]",
        'plugin "ImageLocality" does not extend FilterPlugin plugin',
        id="a plugin enabled at a point it does not implement",
    ),
    pytest.param(
        one(plugins={"filter": {"enabled": [{"name": "NodeName"}, {"name": "NodeName"}]}}),
        "profiles[0].plugins.filter.enabled[1]",
        'plugin "NodeName" already registered as "FilterPlugin"',
        id="a plugin listed twice at a point",
    ),
    pytest.param(
        one(
            plugins={
                "multiPoint": {"enabled": [{"name": "ImageLocality"}, {"name": "ImageLocality"}]}
            }
        ),
        "profiles[0].plugins.multiPoint.enabled[0]",
        'plugin "ImageLocality" already registered as "ScorePlugin"',
        id="TestNewFrameworkMultiPointExpansion/Expect 'already registered' error",
    ),
    pytest.param(
        one(plugins={"multiPoint": {"disabled": [{"name": "PrioritySort"}]}}),
        "profiles[0].plugins.queueSort",
        'only one queue sort plugin required for profile with scheduler name "default-scheduler", '
        "but got 0",
        id="a profile without a queue sort plugin",
    ),
    pytest.param(
        one(plugins={"bind": {"disabled": [{"name": "*"}]}}),
        "profiles[0].plugins.bind",
        'at least one bind plugin is needed for profile with scheduler name "default-scheduler"',
        id="a profile without a bind plugin",
    ),
    # ------------------------------------------------------------ DefaultPreemptionArgs
    pytest.param(
        pc("DefaultPreemption", {"minCandidateNodesPercentage": -1}),
        f"{ARGS0}.minCandidateNodesPercentage",
        "Invalid value: -1: not in valid range [0, 100]",
        id="TestValidateDefaultPreemptionArgs/negative minCandidateNodesPercentage",
    ),
    pytest.param(
        pc("DefaultPreemption", {"minCandidateNodesPercentage": 900}),
        f"{ARGS0}.minCandidateNodesPercentage",
        "Invalid value: 900: not in valid range [0, 100]",
        id="TestValidateDefaultPreemptionArgs/minCandidateNodesPercentage over 100",
    ),
    pytest.param(
        pc("DefaultPreemption", {"minCandidateNodesAbsolute": -1}),
        f"{ARGS0}.minCandidateNodesAbsolute",
        "Invalid value: -1: not in valid range [0, inf)",
        id="TestValidateDefaultPreemptionArgs/negative minCandidateNodesAbsolute",
    ),
    pytest.param(
        pc("DefaultPreemption", {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0}),
        f"{ARGS0}.minCandidateNodesPercentage",
        "Invalid value: 0: cannot be zero at the same time as minCandidateNodesAbsolute",
        id="TestValidateDefaultPreemptionArgs/all zero",
    ),
    # ------------------------------------------------------------ InterPodAffinityArgs
    pytest.param(
        pc("InterPodAffinity", {"hardPodAffinityWeight": -1}),
        f"{ARGS0}.hardPodAffinityWeight",
        "Invalid value: -1: not in valid range [0, 100]",
        id="TestValidateInterPodAffinityArgs/hardPodAffinityWeight less than min",
    ),
    pytest.param(
        pc("InterPodAffinity", {"hardPodAffinityWeight": 101}),
        f"{ARGS0}.hardPodAffinityWeight",
        "Invalid value: 101: not in valid range [0, 100]",
        id="TestValidateInterPodAffinityArgs/hardPodAffinityWeight more than max",
    ),
    # ------------------------------------------------------------ PodTopologySpreadArgs
    pytest.param(
        pts(defaultingType="Unknown"),
        f"{ARGS0}.defaultingType",
        'Unsupported value: "Unknown": supported values: "System", "List"',
        id="TestValidatePodTopologySpreadArgs/wrong constraints",
    ),
    pytest.param(
        pts(defaultConstraints=[constraint()]),
        f"{ARGS0}.defaultingType",
        'Invalid value: "System": when .defaultConstraints are not empty',
        id="TestValidatePodTopologySpreadArgs/system default constraints, but has constraints",
    ),
    pytest.param(
        pts(defaultingType="List", defaultConstraints=[constraint(maxSkew=0)]),
        f"{ARGS0}.defaultConstraints[0].maxSkew",
        "Invalid value: 0: not in valid range (0, inf)",
        id="TestValidatePodTopologySpreadArgs/maxSkew less than zero",
    ),
    pytest.param(
        pts(defaultingType="List", defaultConstraints=[constraint(topologyKey="")]),
        f"{ARGS0}.defaultConstraints[0].topologyKey",
        "Required value: can not be empty",
        id="TestValidatePodTopologySpreadArgs/empty topology key",
    ),
    pytest.param(
        pts(defaultingType="List", defaultConstraints=[constraint(topologyKey="-zone")]),
        f"{ARGS0}.defaultConstraints[0].topologyKey",
        f'Invalid value: "-zone": {NAME_PART_MSG}',
        id="an invalid topology key",
    ),
    pytest.param(
        pts(defaultingType="List", defaultConstraints=[constraint(whenUnsatisfiable="")]),
        f"{ARGS0}.defaultConstraints[0].whenUnsatisfiable",
        "Required value: can not be empty",
        id="TestValidatePodTopologySpreadArgs/whenUnsatisfiable is empty",
    ),
    pytest.param(
        pts(defaultingType="List", defaultConstraints=[constraint(whenUnsatisfiable="Sometimes")]),
        f"{ARGS0}.defaultConstraints[0].whenUnsatisfiable",
        'Unsupported value: "Sometimes": supported values: "DoNotSchedule", "ScheduleAnyway"',
        id="TestValidatePodTopologySpreadArgs/whenUnsatisfiable contains unsupported action",
    ),
    pytest.param(
        pts(
            defaultingType="List",
            defaultConstraints=[constraint(labelSelector={"matchLabels": {"a": "b"}})],
        ),
        f"{ARGS0}.defaultConstraints[0].labelSelector",
        "Forbidden: constraint must not define a selector, as they deduced for each pod",
        id="TestValidatePodTopologySpreadArgs/label selector present",
    ),
    pytest.param(
        pts(
            defaultingType="List", defaultConstraints=[constraint(maxSkew=1), constraint(maxSkew=2)]
        ),
        f"{ARGS0}.defaultConstraints[1]",
        'Duplicate value: "{zone, DoNotSchedule}"',
        id="TestValidatePodTopologySpreadArgs/duplicated constraints",
    ),
    # ------------------------------------------------------------ NodeResourcesFitArgs
    pytest.param(
        fit({"type": "Invalid"}),
        f"{ARGS0}.scoringStrategy.type",
        'Unsupported value: "Invalid": supported values: "LeastAllocated", "MostAllocated", '
        '"RequestedToCapacityRatio"',
        id="an unsupported scoring strategy type",
    ),
    pytest.param(
        fit({"type": "LeastAllocated", "resources": [{"name": "cpu", "weight": 101}]}),
        f"{ARGS0}.scoringStrategy.resources[0].weight",
        "Invalid value: 101: resource weight of cpu not in valid range (0, 100]",
        id="TestValidateLeastAllocatedScoringStrategy/weight greater than max",
    ),
    pytest.param(
        fit({"type": "MostAllocated", "resources": [{"name": "cpu", "weight": -1}]}),
        f"{ARGS0}.scoringStrategy.resources[0].weight",
        "Invalid value: -1: resource weight of cpu not in valid range (0, 100]",
        id="TestValidateMostAllocatedScoringStrategy/weight less than min (v1 defaults 0 to 1)",
    ),
    pytest.param(
        fit({"type": "RequestedToCapacityRatio"}),
        f"{ARGS0}.scoringStrategy.requestedToCapacityRatio",
        "Required value: must be specified when type is RequestedToCapacityRatio",
        id="RequestedToCapacityRatio without requestedToCapacityRatio",
    ),
    pytest.param(
        fit({"type": "RequestedToCapacityRatio", "requestedToCapacityRatio": {"shape": []}}),
        f"{ARGS0}.scoringStrategy.requestedToCapacityRatio.shape",
        "Required value: at least one point must be specified",
        id="TestValidateRequestedToCapacityRatioScoringStrategy/no shapes",
    ),
    pytest.param(
        fit(
            {
                "type": "RequestedToCapacityRatio",
                "requestedToCapacityRatio": {
                    "shape": [{"utilization": 10, "score": 1}, {"utilization": 10, "score": 2}]
                },
            }
        ),
        f"{ARGS0}.scoringStrategy.requestedToCapacityRatio.shape[1].utilization",
        "Invalid value: 10: values must be sorted in increasing order",
        id="TestValidateRequestedToCapacityRatioScoringStrategy/duplicated utilization values",
    ),
    pytest.param(
        fit(
            {
                "type": "RequestedToCapacityRatio",
                "requestedToCapacityRatio": {"shape": [{"utilization": 110, "score": 1}]},
            }
        ),
        f"{ARGS0}.scoringStrategy.requestedToCapacityRatio.shape[0].utilization",
        "Invalid value: 110: not in valid range [0, 100]",
        id="TestValidateRequestedToCapacityRatioScoringStrategy/utilization greater than max",
    ),
    pytest.param(
        fit(
            {
                "type": "RequestedToCapacityRatio",
                "requestedToCapacityRatio": {"shape": [{"utilization": 10, "score": 11}]},
            }
        ),
        f"{ARGS0}.scoringStrategy.requestedToCapacityRatio.shape[0].score",
        "Invalid value: 11: not in valid range [0, 10]",
        id="TestValidateRequestedToCapacityRatioScoringStrategy/score greater than max",
    ),
    pytest.param(
        fit(
            {
                "type": "MostAllocated",
                "requestedToCapacityRatio": {"shape": [{"utilization": 10, "score": 1}]},
            }
        ),
        f"{ARGS0}.scoringStrategy.requestedToCapacityRatio",
        "Forbidden: must be nil when type is not RequestedToCapacityRatio",
        id="requestedToCapacityRatio with another strategy type",
    ),
    pytest.param(
        fit(ignoredResourceGroups=["example.com/aaa"]),
        f"{ARGS0}.ignoredResourceGroups[0]",
        "Invalid value: \"example.com/aaa\": resource group name can't contain '/'",
        id="TestValidateFitArgs/IgnoredResourceGroups: name cannot be contain slash",
    ),
    pytest.param(
        fit(ignoredResources=["-foo"]),
        f"{ARGS0}.ignoredResources[0]",
        f'Invalid value: "-foo": {NAME_PART_MSG}',
        id="an ignored resource name that does not start with an alphanumeric",
    ),
    pytest.param(
        fit(ignoredResources=["longvalue" + "a" * 64]),
        f"{ARGS0}.ignoredResources[0]",
        f'Invalid value: "longvalue{"a" * 64}": name part must be no more than 63 characters',
        id="TestValidateFitArgs/IgnoredResources: too long value",
    ),
    pytest.param(
        fit(ignoredResources=["example.com/"]),
        f"{ARGS0}.ignoredResources[0]",
        'Invalid value: "example.com/": name part must be non-empty',
        id="TestValidateFitArgs/IgnoredResources: name is empty",
    ),
    pytest.param(
        fit(ignoredResources=["example.com/aaa/bbb"]),
        f"{ARGS0}.ignoredResources[0]",
        'Invalid value: "example.com/aaa/bbb": a qualified name must consist of alphanumeric '
        "characters, '-', '_' or '.', and must start and end with an alphanumeric character "
        "(e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
        "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and "
        "'/' (e.g. 'example.com/MyName')",
        id="TestValidateFitArgs/IgnoredResources: name has too many slash",
    ),
    pytest.param(
        fit(
            {
                "type": "RequestedToCapacityRatio",
                "requestedToCapacityRatio": {
                    "shape": [
                        {"utilization": 10, "score": 3},
                        {"utilization": 20, "score": 3},
                        {"utilization": 15, "score": 3},
                    ]
                },
            }
        ),
        f"{ARGS0}.scoringStrategy.requestedToCapacityRatio.shape[2].utilization",
        "Invalid value: 15: values must be sorted in increasing order",
        id="TestValidateRequestedToCapacityRatioScoringStrategy/non-increasing utilization values",
    ),
    # ------------------------------------------------------------ BalancedAllocationArgs
    pytest.param(
        pc("NodeResourcesBalancedAllocation", {"resources": [{"name": "cpu", "weight": 2}]}),
        f"{ARGS0}.resources[0].weight",
        "Invalid value: 2: must be 1",
        id="TestValidateNodeResourcesBalancedAllocationArgs/invalid config",
    ),
    pytest.param(
        pc("NodeResourcesBalancedAllocation", {"resources": [{"name": "cpu"}, {"name": "cpu"}]}),
        f"{ARGS0}.resources[1].name",
        'Duplicate value: "cpu"',
        id="TestValidateNodeResourcesBalancedAllocationArgs/repeated resources",
    ),
    # ------------------------------------------------------------ NodeAffinityArgs
    pytest.param(
        pc(
            "NodeAffinity",
            {
                "addedAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [
                                    {
                                        "key": "invalid/label/key",
                                        "operator": "In",
                                        "values": ["label-1-val"],
                                    }
                                ]
                            }
                        ]
                    }
                }
            },
        ),
        f"{NA_REQ}.matchExpressions[0].key",
        'Invalid value: "invalid/label/key": a qualified name must consist of alphanumeric '
        "characters, '-', '_' or '.', and must start and end with an alphanumeric character "
        "(e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
        "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and "
        "'/' (e.g. 'example.com/MyName')",
        id="TestValidateNodeAffinityArgs/invalid added affinity",
    ),
    pytest.param(
        pc(
            "NodeAffinity",
            {
                "addedAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "weight": 1,
                            "preference": {
                                "matchFields": [
                                    {
                                        "key": "metadata.name",
                                        "operator": "In",
                                        "values": ["node-1", "node-2"],
                                    }
                                ]
                            },
                        }
                    ]
                }
            },
        ),
        f"{ARGS0}.addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]"
        ".matchFields[0].values",
        'Invalid value: []string{"node-1", "node-2"}: must have one element',
        id="TestValidateNodeAffinityArgs/invalid added affinity (preferred matchFields)",
    ),
    pytest.param(
        node_affinity_expr(operator="In", values=[]),
        f"{NA_REQ}.matchExpressions[0].values",
        "Invalid value: []string{}: for 'in', 'notin' operators, values set can't be empty",
        id="NodeAffinityArgs: In without values",
    ),
    pytest.param(
        node_affinity_expr(operator="Exists", values=["a"]),
        f"{NA_REQ}.matchExpressions[0].values",
        'Invalid value: []string{"a"}: values set must be empty for exists and does not exist',
        id="NodeAffinityArgs: Exists with values",
    ),
    pytest.param(
        node_affinity_expr(operator="Gt", values=["x"]),
        f"{NA_REQ}.matchExpressions[0].values[0]",
        "Invalid value: \"x\": for 'Gt', 'Lt' operators, the value must be an integer",
        id="NodeAffinityArgs: Gt with a non-integer",
    ),
    pytest.param(
        node_affinity_expr(operator="Near", values=["a"]),
        f"{NA_REQ}.matchExpressions[0].operator",
        'Unsupported value: "Near"',
        id="NodeAffinityArgs: unknown operator",
    ),
    # ------------------------------------------------------------ VolumeBindingArgs
    pytest.param(
        pc("VolumeBinding", {"bindTimeoutSeconds": -10}),
        f"{ARGS0}.bindTimeoutSeconds",
        "Invalid value: -10: invalid BindTimeoutSeconds, should not be a negative value",
        id="TestValidateVolumeBindingArgs/negative value is invalid config",
    ),
]


@pytest.mark.parametrize(("raw", "field", "message"), ERROR_CASES)
def test_validation_errors(raw: dict[str, Any], field: str, message: str) -> None:
    err = error_of(raw)
    assert (err.field, err.message) == (field, message)
    assert (err.source, err.obj) == ("cfg.yaml", "KubeSchedulerConfiguration")


def test_error_string_names_source_object_and_field() -> None:
    err = error_of(doc(parallelism=-1))
    assert str(err) == (
        "cfg.yaml: KubeSchedulerConfiguration: parallelism: "
        "Invalid value: -1: should be an integer value greater than zero"
    )


def test_explicitly_enabling_an_unsupported_plugin_is_an_error() -> None:
    raw = one(plugins={"filter": {"enabled": [{"name": "VolumeBinding"}]}})
    err = error_of(raw, supported=KUBESCHED)
    assert err.field == "profiles[0].plugins.filter.enabled[0]"
    assert (
        err.message == 'plugin "VolumeBinding" is an upstream plugin kubesched does not implement'
    )
    # Without a restriction the same document is valid: the explicit entry moves it first.
    assert names(parse_config(raw).profiles[0], "filter") == ["VolumeBinding"] + [
        n for n in DEFAULT_FILTER if n != "VolumeBinding"
    ]


def test_unsupported_multi_point_plugin_is_an_error() -> None:
    raw = one(plugins={"multiPoint": {"enabled": [{"name": "DynamicResources"}]}})
    err = error_of(raw, supported=KUBESCHED)
    assert err.field == "profiles[0].plugins.multiPoint.enabled[0]"


def test_fit_args_are_only_checked_when_the_plugin_is_enabled() -> None:
    """Upstream keys Fit's validator as "NodeResourcesFitArgs": only NewFit checks the args."""
    plugins = {"multiPoint": {"disabled": [{"name": "NodeResourcesFit"}]}}
    args = {"scoringStrategy": {"type": "Invalid"}}
    cfg = parse_config(
        one(plugins=plugins, pluginConfig=[{"name": "NodeResourcesFit", "args": args}])
    )
    assert "NodeResourcesFit" not in cfg.profiles[0].plugin_args


def test_errors_are_reported_in_upstream_order() -> None:
    """Profile errors come before the global ones, pluginConfig errors after the profile's own."""
    raw = doc(
        percentageOfNodesToScore=200,
        profiles=[
            {
                "percentageOfNodesToScore": 300,
                "pluginConfig": [
                    {"name": "InterPodAffinity", "args": {"hardPodAffinityWeight": 101}}
                ],
            }
        ],
    )
    assert error_of(raw).field == "profiles[0].percentageOfNodesToScore"


def test_negative_score_weights_are_accepted_as_upstream_does() -> None:
    """Upstream has no positivity check on Plugin.weight: only 0 is replaced (by 1)."""
    raw = one(plugins={"score": {"enabled": [{"name": "ImageLocality", "weight": -2}]}})
    assert scores(parse_config(raw).profiles[0])[0] == ("ImageLocality", -2)


def test_default_plugin_refs_are_plugin_refs() -> None:
    profile = default_config().profiles[0]
    assert profile.enabled("bind") == (PluginRef("DefaultBinder", 0),)
