"""The scheduling framework's contract: what plugins, the runtime and the scheduler share.

May contain: Status codes, CycleState, PodInfo/NodeInfo/Snapshot/NodeTable,
one Protocol per extension point, cluster events and queueing hints, the
ports (clock, random source, cluster writes) through which the outside world
reaches the scheduler, and the internal config schema.
Must not contain: any concrete plugin, the runtime that runs plugins, or a
backend (simulated or live cluster). Imports only ``kubesched.api``.
"""
