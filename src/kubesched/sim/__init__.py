"""The embedded simulated cluster: a deterministic discrete-event engine, an
in-memory object store, the controllers a simulation needs (graceful
termination, PDB status, and the workload controllers of ``sim.controllers``:
ReplicaSet, Deployment, StatefulSet, DaemonSet, Job, CronJob), scenario
loading. It is a backend of ``kubesched.driver`` (the loop, the run record and the
reports live there). Imports driver and below; never ``kubesched.live``.
"""
