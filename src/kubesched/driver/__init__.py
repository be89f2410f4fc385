"""Between the scheduler and a backend (``kubesched.sim``, ``kubesched.live``): what
any cluster needs to run one kube-scheduler and report on it.

- ``events``: the scheduler's inbound port, typed watch events and the
  ``EventSink``/``Watcher``/``ObjectWatcher`` Protocols they are delivered to;
- ``loop``: ``drive``, the loop that applies due changes, delivers events, runs
  scheduling cycles and the queue's timers over a ``Backend`` Protocol;
- ``record``: ``RunRecord``, the backend-neutral record of what happened, fed only
  through the ports;
- ``report`` and ``storage_report``: the SimulationResult document, built from a
  ``RunRecord`` alone.

A backend implements ``Backend`` (the simulator with its engine's clock, a live one
with the wall clock and its informers' notifications), publishes typed events to
its subscribers (the scheduler and the ``RunRecord``) and gives the scheduler a
writer and an event recorder that also report to the ``RunRecord``; the reports
then read any backend's record the same way.
"""
