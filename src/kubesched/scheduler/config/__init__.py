"""``KubeSchedulerConfiguration`` (``kubescheduler.config.k8s.io/v1``) as users write it,
mapped onto ``kubesched.framework.config.SchedulerConfig``.

Public API:

- ``parse_config(raw, source, supported)``: a decoded YAML/JSON document
  (mapping) to ``SchedulerConfig``, with upstream v1.36's defaulting,
  plugin merging, multiPoint expansion and validation. Errors are
  ``InputError(source=..., obj="KubeSchedulerConfiguration", field=<path>,
  message=<upstream's field.Error body>)``.
- ``default_config(supported)``: what an empty configuration gives: one
  ``default-scheduler`` profile with upstream's default plugins and args.
- ``supported``: the plugin names the caller can run. ``None`` means every
  in-tree plugin of ``PLUGIN_POINTS``. Plugins outside it are silently
  dropped from the *default* set (e.g. VolumeBinding, DynamicResources);
  enabling one explicitly, or naming a plugin upstream does not have, is an
  error. It must keep PrioritySort and DefaultBinder (or another queue sort
  and bind plugin) for the default profile to be valid, as upstream requires
  exactly one QueueSort and at least one Bind plugin.
- ``PLUGIN_POINTS``, ``DEFAULT_PLUGINS``, ``SYSTEM_DEFAULT_CONSTRAINTS``:
  upstream facts (see ``defaults``).

Who calls it: the CLI/loader for ``--config`` and for configuration
documents found among the input files; the scheduler for its default.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from kubesched.framework.config import SchedulerConfig
from kubesched.scheduler.config.defaults import (
    API_VERSION,
    DEFAULT_PLUGINS,
    KIND,
    PLUGIN_POINTS,
    SYSTEM_DEFAULT_CONSTRAINTS,
)
from kubesched.scheduler.config.field_errors import ConfigError
from kubesched.scheduler.config.parse import build_config

__all__ = [
    "API_VERSION",
    "DEFAULT_PLUGINS",
    "KIND",
    "PLUGIN_POINTS",
    "SYSTEM_DEFAULT_CONSTRAINTS",
    "default_config",
    "parse_config",
]


def parse_config(
    raw: Mapping[str, object], source: str = "", supported: Collection[str] | None = None
) -> SchedulerConfig:
    """Parse one ``KubeSchedulerConfiguration`` document; raises ``InputError``."""
    try:
        return build_config(raw, supported)
    except ConfigError as err:
        raise err.error.to_input_error(source) from None


def default_config(supported: Collection[str] | None = None) -> SchedulerConfig:
    """The configuration kube-scheduler runs with when given none."""
    return parse_config({"apiVersion": API_VERSION, "kind": KIND}, supported=supported)
