"""The GPU path of the passes: where tensor ops run, transfers, and loops to kernels.

``place_on_device`` and ``elide_transfers`` work on tensors (which device each op runs
on, and the host/device copies that are not needed); ``map_to_gpu`` turns parallel loop
nests into ``gpu.launch`` kernels (planned by ``plan``, built by ``kernel``, ``maps``,
``nests``, ``reductions``, ``tiles``, with library calls from ``blas``);
``outline_kernels`` moves kernel bodies into ``gpu.module``s.
"""
