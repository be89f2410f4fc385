"""PriorityClasses as cluster objects with a lifetime, and Priority admission at the
time each pod is created.

A PriorityClass exists from its ``kubesched.io/create-at`` (default ``0s``) until
its ``kubesched.io/delete-at``. Within one instant, class deletions come first,
then creations, then every other object (as Helm installs them): a pod created at
the instant its class is created takes it, at the instant it is deleted does not.

Priority admission (upstream plugin/pkg/admission/priority) runs once, when a pod
is created, against the classes that exist at that moment:

- ``globalDefault`` applies to pods created while the default class exists;
  after it is deleted new pods fall back to the next default (the lowest value
  if several) or to priority 0;
- a pod naming a class that does not exist then is rejected (Forbidden);
- a pod that already carries ``spec.priority`` (a dump) keeps it when its class
  does not exist then (or it names none); otherwise the values must agree.

:func:`admit_in_time_order` replays the timeline before the run (bad input fails
at once); :func:`class_steps` gives the run the same class changes, for the pods
controllers create later.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Final, Protocol

from kubesched.api.admission import PriorityClasses, admit_pod, prepare_pod_for_create
from kubesched.api.duration import format_duration
from kubesched.api.errors import InputError
from kubesched.api.types import PREEMPT_LOWER_PRIORITY, Pod, PriorityClass

RANK_CLASS_DELETE: Final = 0
RANK_CLASS_CREATE: Final = 1
RANK_OBJECT: Final = 2


class TimelineItem(Protocol):
    """What the timeline reads of a scenario item."""

    @property
    def obj(self) -> object: ...
    @property
    def create_at(self) -> int: ...
    @property
    def delete_at(self) -> int | None: ...
    @property
    def order(self) -> int: ...


@dataclass(frozen=True, slots=True)
class ClassStep:
    """One PriorityClass change: ``create`` or ``delete`` of ``pc`` at ``time``."""

    time: int
    rank: int
    order: int
    pc: PriorityClass
    source: str

    @property
    def create(self) -> bool:
        return self.rank == RANK_CLASS_CREATE

    def apply(self, classes: PriorityClasses) -> None:
        """Create or delete the class; InputError (naming the class) when the API
        server would refuse: an invalid class, a name that exists, a second
        global default, deleting a system class."""
        try:
            if self.create:
                classes.add(self.pc)
            else:
                classes.remove(self.pc.name)
        except InputError as err:
            raise err.with_context(source=self.source) from None


def class_steps(items: Iterable[TimelineItem], source_of: Callable[[int], str]) -> list[ClassStep]:
    """Every create and delete of the items' PriorityClasses, in timeline order."""
    steps: list[ClassStep] = []
    for item in items:
        pc = item.obj
        if not isinstance(pc, PriorityClass):
            continue
        source = source_of(item.order)
        steps.append(ClassStep(item.create_at, RANK_CLASS_CREATE, item.order, pc, source))
        if item.delete_at is not None:
            steps.append(ClassStep(item.delete_at, RANK_CLASS_DELETE, item.order, pc, source))
    steps.sort(key=lambda s: (s.time, s.rank, s.order))
    return steps


def admit(
    pod: Pod,
    classes: PriorityClasses,
    spec_priority: int | None,
    spec_preemption_policy: str | None,
) -> None:
    """Priority admission and the registry's create mutations for one new pod
    (see the module docstring for who keeps ``spec.priority``)."""
    name = pod.priority_class_name
    admitted_long_ago = spec_priority is not None and (not name or name not in classes)
    if admitted_long_ago:
        assert spec_priority is not None
        pod.priority = spec_priority
        pod.preemption_policy = spec_preemption_policy or PREEMPT_LOWER_PRIORITY
    else:
        admit_pod(pod, classes, spec_priority, spec_preemption_policy)
    prepare_pod_for_create(pod)


Check = Callable[[PriorityClasses], None]
"""Admits a pod (or checks a workload's template) against the classes that exist."""


def admit_in_time_order(
    steps: Sequence[ClassStep], checks: Sequence[tuple[int, int, Check]]
) -> None:
    """Replay the class changes and run each ``(time, order, check)`` at its time,
    after the class changes of that instant. A check's InputError gains the time
    when it is not 0 (``... (at 5s)``)."""
    classes = PriorityClasses()
    pending = sorted(checks, key=lambda c: (c[0], c[1]))
    i = 0
    for time, _, check in pending:
        while i < len(steps) and (steps[i].time, steps[i].rank) <= (time, RANK_OBJECT):
            steps[i].apply(classes)
            i += 1
        try:
            check(classes)
        except InputError as err:
            if time == 0:
                raise
            raise InputError(
                f"{err.message} (at {format_duration(time)})",
                source=err.source,
                obj=err.obj,
                field=err.field,
            ) from None
    for step in steps[i:]:
        step.apply(classes)
