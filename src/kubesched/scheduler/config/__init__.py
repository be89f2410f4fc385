"""``KubeSchedulerConfiguration`` (``kubescheduler.config.k8s.io/v1``) as users write it,
mapped onto ``kubesched.framework.config.SchedulerConfig``.

- ``parse_config(raw, source, supported)``: a decoded document to
  ``SchedulerConfig`` with upstream v1.36's defaulting, plugin merging, multiPoint
  expansion and validation; errors are ``InputError(obj="KubeSchedulerConfiguration",
  field=<path>, message=<upstream's field.Error body>)``.
- ``default_config(supported)``: one ``default-scheduler`` profile with upstream's
  default plugins and args.
- ``supported``: the plugin names the caller can run (``None``: all of
  ``PLUGIN_POINTS``). Others are dropped from the *default* set silently; enabling
  one explicitly, or naming an unknown plugin, is an error. It must keep a
  QueueSort and a Bind plugin, as upstream requires.
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
