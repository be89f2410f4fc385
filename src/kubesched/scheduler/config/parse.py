"""From a ``KubeSchedulerConfiguration`` document to ``SchedulerConfig``.

The steps follow kube-scheduler's own: strict decoding, v1 defaulting
(profiles, scheduler name, plugin merge, plugin args), validation, then
building each profile's framework (multiPoint expansion, plugin checks,
score weights) and the cross-profile queue sort check of ``profile.NewMap``.
The first error found, in upstream's order, is raised as ``InputError``.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from kubesched.api.goformat import go_quote
from kubesched.api.messages import child
from kubesched.framework.config import QUEUE_SORT, PluginArgs, Profile, SchedulerConfig
from kubesched.scheduler.config.args import default_args, read_plugin_args
from kubesched.scheduler.config.decode import (
    INT64,
    as_mapping,
    check_fields,
    get_int,
    get_list,
    get_mapping,
    get_str,
)
from kubesched.scheduler.config.defaults import (
    API_VERSION,
    DEFAULT_PARALLELISM,
    DEFAULT_PERCENTAGE_OF_NODES_TO_SCORE,
    DEFAULT_POD_INITIAL_BACKOFF_SECONDS,
    DEFAULT_POD_MAX_BACKOFF_SECONDS,
    DEFAULT_SCHEDULER_NAME,
    KIND,
    NODE_RESOURCES_FIT,
)
from kubesched.scheduler.config.field_errors import ConfigError, fail, index
from kubesched.scheduler.config.plugins import (
    default_plugins,
    enabled_names,
    expand_plugins,
    merge_plugins,
    read_plugins,
)
from kubesched.scheduler.config.validation import (
    ConfigDraft,
    PluginConfigEntry,
    ProfileDraft,
    validate_config,
)

_TOP_FIELDS = (
    "apiVersion",
    "kind",
    "parallelism",
    "percentageOfNodesToScore",
    "podInitialBackoffSeconds",
    "podMaxBackoffSeconds",
    "profiles",
    "extenders",
    # Accepted and ignored: they do not change scheduling decisions.
    "leaderElection",
    "clientConnection",
    "enableProfiling",
    "enableContentionProfiling",
    "delayCacheUntilActive",
    "healthzBindAddress",
    "metricsBindAddress",
)
_PROFILE_FIELDS = ("schedulerName", "percentageOfNodesToScore", "plugins", "pluginConfig")


def _read_profile(
    raw: Mapping[str, object],
    path: str,
    default_name: str | None,
    supported: Collection[str] | None,
) -> ProfileDraft:
    check_fields(raw, path, _PROFILE_FIELDS)
    name = get_str(raw, "schedulerName", path)
    plugins_raw = get_mapping(raw, "plugins", path)
    custom = None if plugins_raw is None else read_plugins(plugins_raw, child(path, "plugins"))
    entries = []
    for i, item in enumerate(get_list(raw, "pluginConfig", path) or ()):
        p = index(child(path, "pluginConfig"), i)
        m = as_mapping(item, p)
        check_fields(m, p, ("name", "args"))
        pname = get_str(m, "name", p) or ""
        parsed = read_plugin_args(pname, m.get("args"), child(p, "args"))
        entries.append(PluginConfigEntry(pname, m.get("args"), parsed, p))
    return ProfileDraft(
        path=path,
        scheduler_name=name if name is not None else (default_name or ""),
        percentage_of_nodes_to_score=get_int(raw, "percentageOfNodesToScore", path),
        plugins=merge_plugins(default_plugins(supported), custom),
        plugin_config=tuple(entries),
    )


def _read_config(raw: Mapping[str, object], supported: Collection[str] | None) -> ConfigDraft:
    api_version = get_str(raw, "apiVersion", "") or ""
    kind = get_str(raw, "kind", "") or ""
    if api_version != API_VERSION:
        raise fail(
            "apiVersion",
            f"no kind {go_quote(KIND)} is registered for version {go_quote(api_version)}",
        )
    if kind != KIND:
        raise fail(
            "kind", f"no kind {go_quote(kind)} is registered for version {go_quote(API_VERSION)}"
        )
    check_fields(raw, "", _TOP_FIELDS)
    if get_list(raw, "extenders", ""):
        raise fail("extenders", "scheduler extenders are not supported by kubesched")
    profiles_raw = list(get_list(raw, "profiles", "") or ()) or [{}]
    # v1 defaulting names the profile only when it is the only one.
    default_name = DEFAULT_SCHEDULER_NAME if len(profiles_raw) == 1 else None
    profiles = tuple(
        _read_profile(
            as_mapping(p, index("profiles", i)), index("profiles", i), default_name, supported
        )
        for i, p in enumerate(profiles_raw)
    )
    parallelism = get_int(raw, "parallelism", "")
    percentage = get_int(raw, "percentageOfNodesToScore", "")
    initial = get_int(raw, "podInitialBackoffSeconds", "", INT64)
    maximum = get_int(raw, "podMaxBackoffSeconds", "", INT64)
    return ConfigDraft(
        parallelism=DEFAULT_PARALLELISM if parallelism is None else parallelism,
        percentage_of_nodes_to_score=DEFAULT_PERCENTAGE_OF_NODES_TO_SCORE
        if percentage is None
        else percentage,
        pod_initial_backoff_seconds=DEFAULT_POD_INITIAL_BACKOFF_SECONDS
        if initial is None
        else initial,
        pod_max_backoff_seconds=DEFAULT_POD_MAX_BACKOFF_SECONDS if maximum is None else maximum,
        profiles=profiles,
    )


def _build_profile(draft: ProfileDraft, supported: Collection[str] | None) -> Profile:
    """``NewFramework``: plugin construction checks, expansion, args per enabled plugin."""
    needed = enabled_names(draft.plugins)
    configured = {e.name: e for e in draft.plugin_config}
    fit = configured.get(NODE_RESOURCES_FIT)
    if NODE_RESOURCES_FIT in needed and fit is not None and fit.parsed and fit.parsed.init_errors:
        raise ConfigError(fit.parsed.init_errors[0])
    plugins = expand_plugins(
        draft.plugins, child(draft.path, "plugins"), draft.scheduler_name, supported
    )
    plugin_args: dict[str, PluginArgs] = {}
    for name in sorted(needed):
        entry = configured.get(name)
        args = entry.parsed.args if entry and entry.parsed else default_args(name)
        if args is not None:
            plugin_args[name] = args
    return Profile(
        scheduler_name=draft.scheduler_name,
        plugins=plugins,
        plugin_args=plugin_args,
        percentage_of_nodes_to_score=draft.percentage_of_nodes_to_score,
    )


def _check_common_queue_sort(drafts: tuple[ProfileDraft, ...], profiles: list[Profile]) -> None:
    """``profile.NewMap``'s validator: one queue sort plugin (and args) for all profiles."""
    first_name = profiles[0].enabled(QUEUE_SORT)[0].name
    first_args = next((e.raw_args for e in drafts[0].plugin_config if e.name == first_name), None)
    for draft, profile in zip(drafts[1:], profiles[1:], strict=True):
        name = profile.enabled(QUEUE_SORT)[0].name
        path = child(child(draft.path, "plugins"), QUEUE_SORT)
        if name != first_name:
            raise fail(
                path,
                f"different queue sort plugins for profile {go_quote(draft.scheduler_name)}: "
                f"{go_quote(name)}, first: {go_quote(first_name)}",
            )
        args = next((e.raw_args for e in draft.plugin_config if e.name == name), None)
        if args != first_args:
            raise fail(
                path,
                f"different queue sort plugin args for profile {go_quote(draft.scheduler_name)}",
            )


def build_config(raw: Mapping[str, object], supported: Collection[str] | None) -> SchedulerConfig:
    """Decode, default, validate and build; raises ``ConfigError``."""
    draft = _read_config(as_mapping(raw, ""), supported)
    errors = validate_config(draft)
    if errors:
        raise ConfigError(errors[0])
    profiles = [_build_profile(p, supported) for p in draft.profiles]
    _check_common_queue_sort(draft.profiles, profiles)
    return SchedulerConfig(
        profiles=tuple(profiles),
        percentage_of_nodes_to_score=draft.percentage_of_nodes_to_score,
        pod_initial_backoff_seconds=draft.pod_initial_backoff_seconds,
        pod_max_backoff_seconds=draft.pod_max_backoff_seconds,
        parallelism=draft.parallelism,
    )
