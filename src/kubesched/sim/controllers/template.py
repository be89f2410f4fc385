"""Pod templates of workloads, and the pods the API server admits from them.

A controller names the pod and adds its own labels, annotations or spec
changes; ``PodTemplate.pod`` then runs Priority admission and the registry's
create mutations (``kubesched.sim.priority_classes.admit``) against the
PriorityClasses that exist at that moment, raising InputError when the API
server would refuse the pod (the controller records ``FailedCreate``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from kubesched.api.admission import PriorityClasses
from kubesched.api.convert import Workload
from kubesched.api.types import OwnerReference, Pod, PodSpec
from kubesched.sim.priority_classes import admit


@dataclass(frozen=True, slots=True, eq=False)
class PodTemplate:
    namespace: str
    labels: Mapping[str, str]
    annotations: Mapping[str, str]
    spec: PodSpec
    node_name: str = ""
    priority: int | None = None
    priority_class_name: str = ""
    preemption_policy: str | None = None
    run_for: int | None = None
    """``kubesched.io/run-for`` of the template: each pod succeeds after this long."""

    @classmethod
    def of(cls, w: Workload, run_for: int | None) -> PodTemplate:
        return cls(
            w.namespace,
            w.template_labels,
            w.template_annotations,
            w.template_spec,
            w.template_node_name,
            w.template_priority,
            w.template_priority_class_name,
            w.template_preemption_policy,
            run_for,
        )

    def pod(
        self,
        name: str,
        owner: OwnerReference,
        classes: PriorityClasses,
        *,
        labels: Mapping[str, str] | None = None,
        annotations: Mapping[str, str] | None = None,
        spec: PodSpec | None = None,
    ) -> Pod:
        """A new pod of the template, admitted; InputError when refused."""
        pod = Pod(
            name,
            self.namespace,
            labels=dict(self.labels if labels is None else labels),
            annotations=dict(self.annotations if annotations is None else annotations),
            spec=self.spec if spec is None else spec,
            priority_class_name=self.priority_class_name,
            node_name=self.node_name,
            owner_references=(owner,),
        )
        admit(pod, classes, self.priority, self.preemption_policy)
        return pod
