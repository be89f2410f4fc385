"""DefaultBinder: binds through the handle's writer; API errors become Error."""

from __future__ import annotations

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.status import SUCCESS, Code
from kubesched.plugins.defaultbinder import DefaultBinder
from tests.builders import make_pod
from tests.fakes import FakeHandle


def test_bind_records_binding() -> None:
    handle = FakeHandle()
    pod = make_pod("p").info()
    assert DefaultBinder(None, handle).bind(CycleState(), pod, "n1") == SUCCESS
    assert handle.writer_impl.binds == [(pod.pod.key, "n1")]


def test_bind_error_becomes_error_status() -> None:
    handle = FakeHandle()
    handle.writer_impl.bind_error = RuntimeError('pods "p" not found')
    got = DefaultBinder(None, handle).bind(CycleState(), make_pod("p").info(), "n1")
    assert got.code == Code.ERROR
    assert got.message() == 'pods "p" not found'
    assert handle.writer_impl.binds == []
