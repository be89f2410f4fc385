"""The workload controllers of the simulated cluster, one module per controller.

- ``replicaset``: ReplicaSets (pods ``<rs>-<5 random characters>``);
- ``deployment``: Deployments, through ReplicaSets ``<deployment>-<hash>``;
- ``statefulset``: StatefulSets (pods ``<sts>-<ordinal>``);
- ``daemonset``: DaemonSets (one pod per eligible node);
- ``job`` and ``cronjob``: Jobs and the CronJobs that create them;
- ``manager``: runs them against the cluster (claims, syncs, lookups).
"""

from kubesched.sim.controllers.naming import ALPHANUMS, random_suffix, template_hash
from kubesched.sim.controllers.replicaset import (
    FAILED_CREATE,
    EventFn,
    ReplicaSetController,
    ReplicaSetSpec,
)

__all__ = [
    "ALPHANUMS",
    "FAILED_CREATE",
    "EventFn",
    "ReplicaSetController",
    "ReplicaSetSpec",
    "random_suffix",
    "template_hash",
]
