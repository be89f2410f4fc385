"""Reports people look at: ``html.render`` turns a SimulationResult document
into one self-contained HTML page (``simulate --report``, ``kubesched report``)."""
