"""``ValidateKubeSchedulerConfiguration`` (pkg/scheduler/apis/config/validation/validation.go)
over the decoded-and-defaulted configuration, plus the profile checks
``profile.NewMap`` makes once the frameworks exist.

Errors come back as a list in upstream's order; the caller raises the first.
Upstream's order: parallelism, then per profile (schedulerName,
percentageOfNodesToScore, removed plugins, pluginConfig entries), duplicate
scheduler names, the common queueSort, the global percentage, backoffs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from kubesched.api.goformat import go_quote
from kubesched.api.messages import child
from kubesched.framework.config import EXTENSION_POINTS, QUEUE_SORT
from kubesched.scheduler.config.args import ParsedArgs
from kubesched.scheduler.config.defaults import API_VERSION, REMOVED_PLUGINS
from kubesched.scheduler.config.field_errors import (
    FieldError,
    GoValue,
    duplicate,
    index,
    invalid,
    required,
)
from kubesched.scheduler.config.plugins import Plugins, RawPluginSet


@dataclass(frozen=True, slots=True)
class PluginConfigEntry:
    name: str
    raw_args: object
    parsed: ParsedArgs | None
    path: str


@dataclass(frozen=True, slots=True)
class ProfileDraft:
    """One profile after decoding and v1 defaulting, before the framework is built."""

    path: str
    scheduler_name: str
    percentage_of_nodes_to_score: int | None
    plugins: Plugins
    plugin_config: tuple[PluginConfigEntry, ...]


@dataclass(frozen=True, slots=True)
class ConfigDraft:
    parallelism: int
    percentage_of_nodes_to_score: int
    pod_initial_backoff_seconds: int
    pod_max_backoff_seconds: int
    profiles: tuple[ProfileDraft, ...]


def _percentage_errors(path: str, value: int | None) -> list[FieldError]:
    if value is not None and not 0 <= value <= 100:
        return [invalid(path, value, "not in valid range [0-100]")]
    return []


def _profile_errors(profile: ProfileDraft) -> list[FieldError]:
    path = profile.path
    errs: list[FieldError] = []
    if not profile.scheduler_name:
        errs.append(required(child(path, "schedulerName")))
    errs.extend(
        _percentage_errors(
            child(path, "percentageOfNodesToScore"), profile.percentage_of_nodes_to_score
        )
    )
    version = go_quote(API_VERSION)
    reason = f"was invalid in version {version} (KubeSchedulerConfiguration is version {version})"
    for point in EXTENSION_POINTS:
        for i, plugin in enumerate(profile.plugins[point].enabled):
            if plugin.name in REMOVED_PLUGINS:
                p = index(child(child(child(path, "plugins"), point), "enabled"), i)
                errs.append(invalid(p, plugin.name, reason))
    seen: set[str] = set()
    for entry in profile.plugin_config:
        if entry.name in seen:
            errs.append(duplicate(entry.path, entry.name))
        seen.add(entry.name)
        if entry.name in REMOVED_PLUGINS:
            errs.append(invalid(entry.path, entry.name, reason))
        elif entry.parsed is not None:
            errs.extend(entry.parsed.errors)
    return errs


def go_plugin_set(ps: RawPluginSet) -> GoValue:
    """``%#v`` of a ``config.PluginSet`` (how upstream prints a bad queueSort)."""

    def plugins(items: list[tuple[str, int]]) -> str:
        if not items:
            return "[]config.Plugin(nil)"
        inner = ", ".join(f"config.Plugin{{Name:{go_quote(n)}, Weight:{w}}}" for n, w in items)
        return f"[]config.Plugin{{{inner}}}"

    enabled = [(p.name, p.weight or 0) for p in ps.enabled]
    disabled = [(n, 0) for n in ps.disabled]
    return GoValue(f"config.PluginSet{{Enabled:{plugins(enabled)}, Disabled:{plugins(disabled)}}}")


def _same_set(a: RawPluginSet, b: RawPluginSet) -> bool:
    return [(p.name, p.weight or 0) for p in a.enabled] == [
        (p.name, p.weight or 0) for p in b.enabled
    ] and list(a.disabled) == list(b.disabled)


def _queue_sort_errors(profiles: tuple[ProfileDraft, ...]) -> list[FieldError]:
    """``validateCommonQueueSort``: compares the queueSort sets as configured."""
    errs: list[FieldError] = []
    first = profiles[0]
    canon = first.plugins[QUEUE_SORT]
    name = canon.enabled[0].name if canon.enabled else ""
    if len(canon.enabled) > 1:
        p = child(child(child(first.path, "plugins"), QUEUE_SORT), "Enabled")
        errs.append(invalid(p, len(canon.enabled), "only one queue sort plugin can be enabled"))
    args: object = None
    for entry in first.plugin_config:
        if name and entry.name == name:
            args = entry.raw_args
    for profile in profiles[1:]:
        current = profile.plugins[QUEUE_SORT]
        if not _same_set(canon, current):
            p = child(child(profile.path, "plugins"), QUEUE_SORT)
            errs.append(invalid(p, go_plugin_set(current), "must be the same for all profiles"))
        for entry in profile.plugin_config:
            if name and entry.name == name and entry.raw_args != args:
                p = child(child(profile.path, "pluginConfig"), "args")
                shown = GoValue(json.dumps(entry.raw_args, sort_keys=True))
                errs.append(invalid(p, shown, "queueSort must be the same for all profiles"))
    return errs


def validate_config(cfg: ConfigDraft) -> list[FieldError]:
    """Every error ``ValidateKubeSchedulerConfiguration`` reports, in its order."""
    errs: list[FieldError] = []
    if cfg.parallelism <= 0:
        errs.append(
            invalid("parallelism", cfg.parallelism, "should be an integer value greater than zero")
        )
    names: dict[str, int] = {}
    for i, profile in enumerate(cfg.profiles):
        errs.extend(_profile_errors(profile))
        if profile.scheduler_name in names:
            first = index("profiles", names[profile.scheduler_name])
            # Upstream passes the first profile's field path as the duplicate value.
            errs.append(
                duplicate(
                    child(profile.path, "schedulerName"), GoValue(child(first, "schedulerName"))
                )
            )
        names[profile.scheduler_name] = i
    if cfg.profiles:
        errs.extend(_queue_sort_errors(cfg.profiles))
    errs.extend(_percentage_errors("percentageOfNodesToScore", cfg.percentage_of_nodes_to_score))
    if cfg.pod_initial_backoff_seconds <= 0:
        errs.append(
            invalid(
                "podInitialBackoffSeconds",
                cfg.pod_initial_backoff_seconds,
                "must be greater than 0",
            )
        )
    if cfg.pod_max_backoff_seconds < cfg.pod_initial_backoff_seconds:
        errs.append(
            invalid(
                "podMaxBackoffSeconds",
                cfg.pod_max_backoff_seconds,
                "must be greater than or equal to PodInitialBackoffSeconds",
            )
        )
    return errs
