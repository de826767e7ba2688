"""Loops and scalar IR to LLVM IR for the host CPU, and what the compiled code runs with.

``to_llvm.py`` is the ``to-llvm`` pass; ``context.py`` holds the per-op rule registry
and the lowering state; one module per part of the IR (values, casts, scalar ops, math
calls, division, memory, views, loops, control flow, parallel loops, calls, functions,
the entry point, the workspace); the process side: the C ABI (``abi``), BLAS, the
thread pool, Ctrl-C polling (``interrupts``) and the symbols registered for the JIT
(``runtime``). The GPU target reuses its op rules for kernel bodies.
"""
