"""The gpu dialect: device memory transfers, kernels, launches, thread ids, barriers, shared
memory and atomics. No new type: device and shared memory are ``!loops.buffer<...>`` with
``space="device"`` / ``space="shared"``; kernel bodies use the loops and scalar dialects.

Ops and builders (every ``build`` also takes ``location=None``; sizes and ids are ``index``):

- ``ToDeviceOp.build(value, context="cuda")`` ``gpu.to_device``: tensor -> same tensor type, or
  host buffer (any layout) -> fresh contiguous device buffer. ``ToHostOp.build(value,
  context="cuda")`` ``gpu.to_host``: the way back.
- ``MemcpyOp.build(source, target)`` ``gpu.memcpy``: between contiguous host/device buffers of
  equal shape and element type.
- ``GpuModuleOp.build(name, ops=())`` ``gpu.module @name``: holds kernels, sits in the
  builtin.module; ``.lookup(name)``, ``.kernels``.
- ``GpuFuncOp.build(name, input_types, body=None)`` ``gpu.func`` (attrs ``sym_name``,
  ``function_type`` without results, unit ``kernel``): ``body(builder, *args)`` fills it and
  ``gpu.return`` is appended. ``ReturnOp.build()`` ``gpu.return``.
- ``LaunchFuncOp.build(module, kernel, grid, block, args=())`` ``gpu.launch_func``: ``grid`` and
  ``block`` are three index Values (x, y, z); ``.grid_sizes``, ``.block_sizes``, ``.args``,
  ``.callee()``.
- ``LaunchOp.build(grid, block, body=None)`` ``gpu.launch``: ``body(builder)`` fills the region
  and ``gpu.terminator`` is appended. ``TerminatorOp.build()`` ``gpu.terminator``.
- ``ThreadIdOp.build(dim)``, ``BlockIdOp.build(dim)``, ``BlockDimOp.build(dim)``,
  ``GridDimOp.build(dim)`` with ``dim`` in "x", "y", "z": ``gpu.thread_id`` ... -> index.
- ``BarrierOp.build()`` ``gpu.barrier``; ``SyncOp.build()`` ``gpu.sync`` (host).
- ``SharedAllocOp.build(shape, element)`` ``gpu.shared_alloc``: static shape, space "shared".
- ``AtomicRmwOp.build(kind, value, buffer, indices)`` ``gpu.atomic_rmw``, kind in add, max,
  min, exch; gives the old value.

``run_kernel(func_op, grid, block, args)`` runs a kernel in the interpreter (NumPy arrays for
buffers). Modules: ``transfers``, ``kernels``, ``ids``, ``sync``, ``shared_memory``,
``atomics`` (ops, verifiers, interpreter rules), ``threads`` and ``interpreter`` (the thread
model), ``checks``. The text format and the thread model are described in docs/gpu.md.
"""
from .transfers import MemcpyOp, ToDeviceOp, ToHostOp, transferred_type  # noqa: F401
from .kernels import (GpuFuncOp, GpuModuleOp, LaunchFuncOp, LaunchOp, ReturnOp,  # noqa: F401
                      TerminatorOp, enclosing_module, resolve_kernel)
from .ids import BlockDimOp, BlockIdOp, GridDimOp, ThreadIdOp  # noqa: F401
from .sync import BarrierOp, SyncOp  # noqa: F401
from .shared_memory import SharedAllocOp  # noqa: F401
from .atomics import ATOMIC_KINDS, AtomicRmwOp  # noqa: F401
from .checks import DIMENSIONS, enclosing_kernel, is_kernel_argument_type  # noqa: F401
from .threads import BarrierDivergenceError  # noqa: F401
from .interpreter import captured_values, launch_sizes, run_kernel  # noqa: F401

from lowering.ir.context import Dialect  # noqa: E402

# The ops this package defines, as one dialect.
DIALECT = Dialect.of_package("gpu", __name__)
