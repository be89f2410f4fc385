"""The scheduler: queue (activeQ, backoffQ, unschedulable pods), nominator, cache,
the scheduling cycle (schedule_one), KubeSchedulerConfiguration v1, the in-tree
registry, events and metrics.

Imports framework, runtime, plugins and api; never a backend (sim/live).
Time, randomness and cluster writes arrive through ``kubesched.framework.ports``.
"""
