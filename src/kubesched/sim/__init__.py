"""The embedded simulated cluster: a deterministic discrete-event engine, an
in-memory object store, the controllers a simulation needs (graceful
termination, PDB status, and the workload controllers of ``sim.controllers``:
ReplicaSet, Deployment, StatefulSet, DaemonSet, Job, CronJob), scenario
loading and result reports. Imports scheduler and below; never ``kubesched.live``.
"""
