"""The GPU backend of ``function()``: place, compile and run a module on a GPU.

``build.py`` compiles the ``gpu`` stage and its PTX; ``executor.py`` is the ``gpu``
executor, ``host.py`` the host program it runs; ``device.py`` and ``arrays.py`` are the
device (PyCUDA or the interpreted one) and its arrays; ``placement.py`` records where
arguments and results live; ``profile_plan.py`` is the profiled run of a GPU function;
``call_protocol.py`` what ``Function`` and the executor agree on.
"""
