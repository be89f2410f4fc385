"""Filters without a vector form (the volume plugins) keep the vector path for
pods that make them Skip at PreFilter: the runtime decides per set of skipped
plugins, so a pod without volumes filters as fast as before, and a pod with
volumes goes through the per-node path (the same answers)."""

from __future__ import annotations

import numpy as np

from kubesched.api.storage import PodVolume
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.types import PodInfo
from kubesched.runtime.derived_forms import FilterForms
from kubesched.runtime.framework import Framework
from kubesched.scheduler.registry import in_tree_registry
from tests.builders import build_table, make_node, make_pod
from tests.fakes import FakeReader
from tests.plugins.volume_harness import make_pv, make_pvc, make_sc
from tests.scheduler.harness import build_framework, in_tree_profile
from tests.storage_fakes import FakeStorage

VOLUME_PLUGINS = {"VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone"}


def _framework(storage: FakeStorage) -> Framework:
    table = build_table([make_node(f"n{i}").capacity(cpu="4", pods=110).obj() for i in range(4)])
    return build_framework(
        in_tree_profile(), in_tree_registry(), table=table, reader=FakeReader(volumes=storage)
    )


def test_the_default_profile_has_filters_without_a_vector_form() -> None:
    fwk = _framework(FakeStorage())
    names = {p.name for p in fwk.filter_plugins if FilterForms.of(p).vector is None}
    assert names == VOLUME_PLUGINS


def test_a_pod_without_volumes_skips_them_and_stays_vectorised() -> None:
    fwk = _framework(FakeStorage())
    state = CycleState()
    pod = PodInfo(make_pod("p").req(cpu="1").obj())
    _, s, _ = fwk.run_pre_filter_plugins(state, pod)
    assert s.is_success()
    assert state.skip_filter_plugins >= VOLUME_PLUGINS
    rows = np.arange(4, dtype=np.int64)
    assert fwk.filter_rows(state, pod, rows, {}) is not None


def test_a_pod_with_a_claim_takes_the_per_node_path() -> None:
    storage = FakeStorage(
        pvcs=[make_pvc("data", "wait-sc")],
        pvs=[make_pv("pv", "wait-sc")],
        classes=[make_sc("wait-sc")],
    )
    fwk = _framework(storage)
    state = CycleState()
    pod = PodInfo(make_pod("p").pvc("data").obj())
    _, s, _ = fwk.run_pre_filter_plugins(state, pod)
    assert s.is_success()
    assert "VolumeBinding" not in state.skip_filter_plugins
    rows = np.arange(4, dtype=np.int64)
    assert fwk.filter_rows(state, pod, rows, {}) is None
    assert not fwk.what_if_supported(state, pod)


def test_a_pod_with_only_config_volumes_skips_them_too() -> None:
    """configMap / secret / emptyDir volumes need none of the volume plugins."""
    fwk = _framework(FakeStorage())
    state = CycleState()
    b = make_pod("p")
    for name, source in (("cfg", "configMap"), ("tok", "secret"), ("tmp", "emptyDir")):
        b = b.volume(PodVolume(name, source))
    pod = PodInfo(b.obj())
    _, s, _ = fwk.run_pre_filter_plugins(state, pod)
    assert s.is_success()
    assert state.skip_filter_plugins >= VOLUME_PLUGINS
    assert fwk.filter_rows(state, pod, np.arange(4, dtype=np.int64), {}) is not None
