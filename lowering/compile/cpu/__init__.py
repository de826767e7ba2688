"""The CPU backend of ``function()``: build a module into native code and call it.

``build.py`` compiles (bufferize, plan memory, to-llvm, O3) and caches the object code;
``executor.py`` is the ``cpu`` executor; a call goes through the native wrapper
(``wrapper_ir``, ``native_call``) or ctypes (``ctypes_call``), which agree on
``call_protocol``.
"""
