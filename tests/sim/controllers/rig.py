"""A controller manager on a simulated cluster without a scheduler, for controller
tests: the test binds pods, finishes them and moves the clock itself.

``settle`` applies what is due now as the simulation loop does (engine actions,
then watch events, repeatedly), so controllers sync after every change of the
instant, as in a run.
"""

from __future__ import annotations

import random
import textwrap
from typing import Any

from kubesched.api.admission import PriorityClasses
from kubesched.api.convert import Workload
from kubesched.api.load import documents_from_text, load_objects
from kubesched.api.types import FAILED, NANOS, RUNNING, SUCCEEDED, Node, Pod
from kubesched.driver.record import EventRecord
from kubesched.sim.cluster import Cluster
from kubesched.sim.controllers.manager import ControllerManager
from kubesched.sim.engine import Engine
from tests.builders import make_node


def workload(text: str) -> Workload:
    """One workload object from YAML."""
    result = load_objects(documents_from_text(textwrap.dedent(text), "test.yaml"))
    (loaded,) = result.objects
    assert isinstance(loaded.obj, Workload)
    return loaded.obj


def pods_from(text: str) -> list[Pod]:
    result = load_objects(documents_from_text(textwrap.dedent(text), "test.yaml"))
    out = [o.obj for o in result.objects]
    assert all(isinstance(p, Pod) for p in out)
    return out  # type: ignore[return-value]


class Rig:
    def __init__(self, seed: int = 0, epoch: int = 0) -> None:
        self.engine = Engine()
        self.cluster = Cluster(self.engine, random.Random(1))
        self.classes = PriorityClasses()
        self.cm = ControllerManager(self.cluster, self.classes, seed, epoch)
        self.cluster.watchers.append(self.cm)
        self.cluster.scale_of = self.cm.scale_of
        self.cluster.selector_of = self.cm.selector_of

    # ------------------------------------------------------------------ objects
    def nodes(self, *names: str, **kw: Any) -> list[Node]:
        out = []
        for name in names:
            node = make_node(name).capacity(cpu="8", memory="16Gi", pods=110).obj()
            for k, v in kw.items():
                setattr(node, k, v)
            self.cluster.create_node(node)
            out.append(node)
        self.settle()
        return out

    def node(self, node: Node) -> None:
        self.cluster.create_node(node)
        self.settle()

    def add_pods(self, *pods: Pod, run_for: int | None = None) -> None:
        for p in pods:
            self.cluster.create_pod(p, run_for)
        self.settle()

    def create(self, *objs: Workload, run_for: int | None = None) -> None:
        for w in objs:
            self.cm.create(w, run_for)
        self.settle()

    # ------------------------------------------------------------------ time
    def settle(self) -> None:
        for _ in range(1000):
            ran = self.engine.run_due()
            flushed = self.cluster.flush()
            if not ran and not flushed:
                return
        raise AssertionError("did not settle")

    def advance(self, seconds: float) -> None:
        """Move the clock, applying everything due on the way."""
        end = self.engine.now + int(seconds * NANOS)
        while True:
            nxt = self.engine.next_time()
            if nxt is None or nxt > end:
                break
            self.engine.now = nxt
            self.settle()
        self.engine.now = end
        self.settle()

    # ------------------------------------------------------------------ kubelet
    def bind(self, name: str, node: str, namespace: str = "default") -> None:
        self.cluster.bind(self.pod(name, namespace), node)
        self.settle()

    def bind_all(self, node: str) -> None:
        for p in list(self.cluster.pods.values()):
            if not p.node_name:
                self.cluster.bind(p, node)
        self.settle()

    def set_phase(self, name: str, phase: str, namespace: str = "default") -> None:
        """The kubelet reports the pod finished (Succeeded or Failed)."""
        assert phase in (SUCCEEDED, FAILED, RUNNING)
        cur = self.pod(name, namespace)
        new = cur.copy()
        new.phase = phase
        self.cluster._replace(cur, new)
        self.settle()

    def delete(self, name: str, namespace: str = "default") -> None:
        self.cluster.delete_gracefully(self.pod(name, namespace), "Deleted")
        self.settle()

    # ------------------------------------------------------------------ reading
    def pod(self, name: str, namespace: str = "default") -> Pod:
        return self.cluster.pods[f"{namespace}/{name}"]

    def names(self, prefix: str = "") -> list[str]:
        """Live pods' names, sorted."""
        return sorted(p.name for p in self.cluster.pods.values() if p.name.startswith(prefix))

    def active(self, prefix: str = "") -> list[str]:
        """Live pods neither terminating nor finished, sorted."""
        return sorted(
            p.name
            for p in self.cluster.pods.values()
            if p.name.startswith(prefix)
            and p.deletion_timestamp is None
            and p.phase not in (SUCCEEDED, FAILED)
        )

    def terminating(self) -> list[str]:
        return sorted(p.name for p in self.cluster.pods.values() if p.deletion_timestamp)

    def created(self) -> list[str]:
        """Every pod that ever existed, in creation order."""
        return [r.pod.name for r in self.cluster.record.lives.values()]

    def events(self, kind: str | None = None) -> list[EventRecord]:
        return [e for e in self.cluster.record.events if kind is None or e.kind == kind]

    def event_reasons(self, kind: str | None = None) -> list[tuple[str, str]]:
        return [(e.reason, e.message) for e in self.events(kind)]
