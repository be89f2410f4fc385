"""The embedded simulated cluster: a deterministic discrete-event engine, an
in-memory object store, the controllers a simulation needs (graceful
termination, ReplicaSet/Deployment, PDB status), scenario loading and result
reports. Imports scheduler and below; never ``kubesched.live``.
"""
