"""A profile's ``plugins``: reading, merging with the defaults, multiPoint expansion.

1. ``read_plugins``: the user's ``plugins`` section as written.
2. ``merge_plugins`` (v1 ``mergePlugins``/``mergePluginSet``): per extension point
   and for multiPoint, disabled names (``"*"`` = all) drop default entries; a user
   entry naming a default plugin replaces it in place (default's position, user's
   weight even when unset); other user entries are appended in order, duplicates
   included.
3. ``expand_plugins`` (runtime ``NewFramework``/``expandMultiPointPlugins``/
   ``getScoreWeights``): specific-point lists are checked, then multiPoint plugins
   join every point they implement unless it disables them or ``"*"``. Order per
   point: its explicitly listed plugins that are also in multiPoint (point's
   order), the multiPoint plugins, the point's other plugins. A Score weight comes
   from the score list, else the multiPoint list; unset or 0 means 1.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass

from kubesched.api.goformat import go_quote
from kubesched.api.messages import child
from kubesched.framework.config import BIND, EXTENSION_POINTS, QUEUE_SORT, SCORE, PluginRef
from kubesched.scheduler.config.decode import (
    as_mapping,
    check_fields,
    get_int,
    get_list,
    get_mapping,
    get_str,
)
from kubesched.scheduler.config.defaults import (
    DEFAULT_PLUGINS,
    FRAMEWORK_ORDER,
    INTERFACE_NAMES,
    MAX_NODE_SCORE,
    MAX_TOTAL_SCORE,
    MULTI_POINT,
    PLUGIN_POINTS,
)
from kubesched.scheduler.config.field_errors import fail, index

ALL_SETS = (MULTI_POINT, *EXTENSION_POINTS)


@dataclass(frozen=True, slots=True)
class RawPlugin:
    """One ``enabled`` entry; ``weight`` None = unset; ``path`` where the user wrote it."""

    name: str
    weight: int | None = None
    path: str = ""


@dataclass(frozen=True, slots=True)
class RawPluginSet:
    enabled: tuple[RawPlugin, ...] = ()
    disabled: tuple[str, ...] = ()


Plugins = dict[str, RawPluginSet]
"""Plugin set per key of ``ALL_SETS``."""


def default_plugins(supported: Collection[str] | None) -> Plugins:
    """``getDefaultPlugins()``, without the plugins the caller does not support."""
    enabled = tuple(
        RawPlugin(name, weight)
        for name, weight in DEFAULT_PLUGINS
        if supported is None or name in supported
    )
    plugins = {key: RawPluginSet() for key in ALL_SETS}
    plugins[MULTI_POINT] = RawPluginSet(enabled=enabled)
    return plugins


def _read_plugin_set(raw: Mapping[str, object], path: str) -> RawPluginSet:
    check_fields(raw, path, ("enabled", "disabled"))
    sets: dict[str, list[RawPlugin]] = {"enabled": [], "disabled": []}
    for key, out in sets.items():
        for i, item in enumerate(get_list(raw, key, path) or ()):
            p = index(child(path, key), i)
            entry = as_mapping(item, p)
            check_fields(entry, p, ("name", "weight"))
            name = get_str(entry, "name", p) or ""
            out.append(RawPlugin(name, get_int(entry, "weight", p), p))
    return RawPluginSet(tuple(sets["enabled"]), tuple(p.name for p in sets["disabled"]))


def read_plugins(raw: Mapping[str, object], path: str) -> Plugins:
    """The ``plugins`` section of one profile, as written (absent sets are empty)."""
    check_fields(raw, path, ALL_SETS)
    plugins = {}
    for key in ALL_SETS:
        m = get_mapping(raw, key, path)
        plugins[key] = RawPluginSet() if m is None else _read_plugin_set(m, child(path, key))
    return plugins


def _merge_set(default: RawPluginSet, custom: RawPluginSet) -> RawPluginSet:
    disabled = (*custom.disabled, *default.disabled)
    disabled_set = set(disabled)
    # A later duplicate overwrites an earlier one, as Go's map assignment does.
    by_name = {p.name: (i, p) for i, p in enumerate(custom.enabled)}
    replaced: set[int] = set()
    enabled: list[RawPlugin] = []
    if "*" not in disabled_set:
        for plugin in default.enabled:
            if plugin.name in disabled_set:
                continue
            if plugin.name in by_name:
                i, plugin = by_name[plugin.name]
                replaced.add(i)
            enabled.append(plugin)
    enabled.extend(p for i, p in enumerate(custom.enabled) if i not in replaced)
    return RawPluginSet(tuple(enabled), disabled)


def merge_plugins(defaults: Plugins, custom: Plugins | None) -> Plugins:
    """v1 ``mergePlugins``: ``custom`` None (no ``plugins`` key) keeps the defaults."""
    if custom is None:
        return dict(defaults)
    return {key: _merge_set(defaults[key], custom[key]) for key in ALL_SETS}


def _where(plugin: RawPlugin, fallback: str) -> str:
    return plugin.path or fallback


def _check_plugin(
    plugin: RawPlugin, point: str, fallback: str, supported: Collection[str] | None
) -> None:
    """The framework's per-point checks: the plugin exists and implements ``point``."""
    _exists_and_supported(plugin, point, fallback, supported)
    if point not in PLUGIN_POINTS[plugin.name]:
        raise fail(
            _where(plugin, fallback),
            f"plugin {go_quote(plugin.name)} does not extend {INTERFACE_NAMES[point]} plugin",
        )


def _expand_point(
    plugins: Plugins, point: str, path: str, supported: Collection[str] | None
) -> list[str]:
    """The plugins of one point after multiPoint expansion, in run order."""
    explicit = list(dict.fromkeys(p.name for p in plugins[point].enabled))
    multi = plugins[MULTI_POINT].enabled
    disabled = set(plugins[point].disabled)
    if not multi or "*" in disabled:
        return explicit
    fallback = child(path, MULTI_POINT)
    overrides: set[str] = set()
    from_multi: list[str] = []
    for plugin in multi:
        _exists_and_supported(plugin, point, fallback, supported)
        if point not in PLUGIN_POINTS[plugin.name] or plugin.name in disabled:
            continue
        if plugin.name in explicit:
            overrides.add(plugin.name)
            continue
        if plugin.name in from_multi:
            raise fail(
                _where(plugin, fallback),
                f"plugin {go_quote(plugin.name)} already registered as "
                f"{go_quote(INTERFACE_NAMES[point])}",
            )
        from_multi.append(plugin.name)
    first = [n for n in explicit if n in overrides]
    rest = [n for n in explicit if n not in overrides]
    return first + from_multi + rest


def _exists_and_supported(
    plugin: RawPlugin, point: str, fallback: str, supported: Collection[str] | None
) -> None:
    iface = INTERFACE_NAMES[point]
    if plugin.name not in PLUGIN_POINTS:
        raise fail(_where(plugin, fallback), f"{iface} {go_quote(plugin.name)} does not exist")
    if supported is not None and plugin.name not in supported:
        raise fail(
            _where(plugin, fallback),
            f"plugin {go_quote(plugin.name)} is an upstream plugin kubesched does not implement",
        )


def _score_weights(plugins: Plugins, path: str) -> dict[str, int]:
    weights: dict[str, int] = {}
    total = 0
    for plugin in (*plugins[SCORE].enabled, *plugins[MULTI_POINT].enabled):
        if SCORE not in PLUGIN_POINTS[plugin.name] or plugin.name in weights:
            continue
        # "a weight of zero is not permitted": unset or 0 scores with weight 1.
        weight = plugin.weight or 1
        if weight * MAX_NODE_SCORE > MAX_TOTAL_SCORE - total:
            raise fail(child(path, SCORE), "total score of Score plugins could overflow")
        total += weight * MAX_NODE_SCORE
        weights[plugin.name] = weight
    return weights


def expand_plugins(
    plugins: Plugins, path: str, scheduler_name: str, supported: Collection[str] | None
) -> dict[str, tuple[PluginRef, ...]]:
    """The enabled plugins of every extension point, in run order; ``ConfigError``
    with the framework's messages in its order (fields under ``path``)."""
    for point in FRAMEWORK_ORDER:
        seen: set[str] = set()
        for plugin in plugins[point].enabled:
            _check_plugin(plugin, point, child(path, point), supported)
            if plugin.name in seen:
                raise fail(
                    _where(plugin, child(path, point)),
                    f"plugin {go_quote(plugin.name)} already registered as "
                    f"{go_quote(INTERFACE_NAMES[point])}",
                )
            seen.add(plugin.name)
    names = {point: _expand_point(plugins, point, path, supported) for point in FRAMEWORK_ORDER}
    if len(names[QUEUE_SORT]) != 1:
        raise fail(
            child(path, QUEUE_SORT),
            "only one queue sort plugin required for profile with scheduler name "
            f"{go_quote(scheduler_name)}, but got {len(names[QUEUE_SORT])}",
        )
    if not names[BIND]:
        raise fail(
            child(path, BIND),
            f"at least one bind plugin is needed for profile with scheduler name "
            f"{go_quote(scheduler_name)}",
        )
    weights = _score_weights(plugins, path)
    return {
        point: tuple(PluginRef(n, weights[n] if point == SCORE else 0) for n in names[point])
        for point in EXTENSION_POINTS
    }


def enabled_names(plugins: Plugins) -> set[str]:
    """Every plugin named in an ``enabled`` list (upstream's ``pluginsNeeded``)."""
    return {p.name for key in ALL_SETS for p in plugins[key].enabled}
