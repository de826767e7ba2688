"""Benchmarks of ``lowering`` against the array libraries and compilers installed beside it.

``python benchmarks/run.py [--quick] [--only NAME]`` runs every workload on ``lowering`` and on
each installed peer (NumPy, numexpr, Numba, PyTensor, JAX) in one process, checks that their
results agree, and writes the table into ``docs/performance.md``. See ``benchmarks/README.md``.
"""
