"""The machinery of ``function(profile=True)``: per-node plans, memory, reports, traces.

``plan.py`` runs a function one node at a time; ``memory.py`` models the buffers'
peaks; ``report.py`` writes the summary and ``trace.py`` a Chrome trace. The profiled
``Function`` itself is ``lowering.compile.profiling``.
"""
