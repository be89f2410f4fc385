"""Between the scheduler and a backend (``kubesched.sim`` today, ``kubesched.live``
later): what any cluster needs to run one kube-scheduler and report on it.

- ``events``: the scheduler's inbound port, typed watch events
  (``NodeAdded`` ... ``ObjectDeleted``) and the ``EventSink``/``Watcher``/
  ``ObjectWatcher`` Protocols they are delivered to;
- ``loop``: ``drive(backend, scheduler, stats, ...)``, the loop that applies
  due changes, delivers events, runs scheduling cycles and the queue's timers
  and decides when the run ends, over a ``Backend`` Protocol (``now``,
  ``run_due``, ``flush``, ``next_time``, ``advance``);
- ``record``: ``RunRecord``, the backend-neutral record of what happened (pod
  lives, events, preemptions, watch lines, nodes and storage objects as they
  end), fed only through the ports;
- ``report`` and ``storage_report``: the SimulationResult document, built from
  a ``RunRecord`` alone.

The simulated backend (``kubesched.sim``) is ``sim.cluster.Cluster``: its engine
is the clock and the schedule of changes, ``flush`` publishes its queued
events to its watchers (the record among them), it is the scheduler's reader
and writer, and its ``RunRecord`` is the scheduler's recorder;
``sim.simulation.Simulation`` only wires engine, cluster, record and scheduler
together and calls ``drive``.

A live backend reuses all of this unchanged. It implements ``Backend`` over an
API server: ``now`` is the wall clock (nanoseconds since the run started);
``run_due`` applies whatever the user scheduled for now (if anything);
``flush`` drains its informers' buffered add/update/delete notifications,
turns each into the typed event and publishes it to the same subscribers (the
scheduler, as an ``EventSink``, and the ``RunRecord``); ``next_time`` is the
next scheduled change or a short poll interval; ``advance(t)`` waits until
``t`` or until a notification arrives. Its ``ClusterWriter`` issues the
Binding, status patches and DELETEs (calling ``RunRecord.deleting`` with
``Preempted`` for the scheduler's DELETEs), its ``EventRecorder`` posts
``events.k8s.io`` Events and forwards each to ``RunRecord.event`` /
``preemption``. The reports (``report.build_result``, the CLI's tables, the
replay summary) then read its record exactly as they read a simulation's.
"""
