"""DefaultBinder: binds the pod by creating its Binding (upstream
defaultbinder/default_binder.go), here through ``handle.writer.bind``."""

from __future__ import annotations

from typing import Final

from kubesched.framework.config import PluginArgs
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import Handle
from kubesched.framework.status import SUCCESS, Status, error
from kubesched.framework.types import PodInfo

NAME: Final = "DefaultBinder"


class DefaultBinder:
    """Bind plugin; takes no args."""

    name = NAME

    def __init__(self, args: PluginArgs | None, handle: Handle) -> None:
        del args
        self._handle = handle

    def bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:
        """Success, or Error with the writer's exception text (upstream AsStatus(err))."""
        try:
            self._handle.writer.bind(pod.pod, node_name)
        except Exception as exc:  # any API failure becomes an Error status
            return error(str(exc))
        return SUCCESS
