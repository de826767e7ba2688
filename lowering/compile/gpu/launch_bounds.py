"""Launch bounds: the most threads per block each kernel of a GPU program is launched with.

The host program launches every kernel with block sizes it states as constants (map-to-gpu
picks them: the ``block-size`` option, tiles of it, one thread); a block size computed at run
time is bounded by the program's ``block_size``. The bound goes into the PTX as ``.maxntid``
(``to_ptx.translate_gpu_module(max_threads=...)``), so that ptxas allocates registers for that
many threads: without it a kernel may use more registers than a block of ``block_size`` threads
can have (64K per block), and the launch fails with ``CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES``.

>>> from lowering.ir.parser import parse_module
>>> module = parse_module('''
... func.func @f(%x: !loops.buffer<?xf32, space="device">) {
...   %one = scalar.constant 1 : index
...   %block = scalar.constant 128 : index
...   gpu.launch_func @kernels @k blocks(%one, %one, %one) threads(%block, %one, %one)
...       args(%x : !loops.buffer<?xf32, space="device">) : index
...   func.return
... }''')
>>> launch_bounds(module, 256)
{('kernels', 'k'): 128}
"""
from __future__ import annotations

from lowering.ir.core import Operation

MAX_BLOCK_THREADS = 1024  # the most threads a block has on any NVIDIA GPU


def _constant(value) -> int | None:
    owner = getattr(value, "owner", None)
    if isinstance(owner, Operation) and owner.name == "scalar.constant":
        return int(owner.attributes["value"].value)
    return None


def launch_threads(launch: Operation, block_size: int) -> int:
    """Threads per block of one ``gpu.launch_func``: the product of its block sizes when they
    are constants, else ``block_size``."""
    sizes = [_constant(v) for v in launch.operands[3:6]]
    if any(s is None for s in sizes):
        return block_size
    return sizes[0] * sizes[1] * sizes[2]


def launch_bounds(module: Operation, block_size: int) -> dict[tuple[str, str], int]:
    """``(gpu.module name, kernel name) -> most threads per block`` over every launch of it in
    the host functions of ``module`` (the ``gpu`` stage); ``block_size`` bounds launches whose
    block size is not a constant."""
    block_size = min(max(int(block_size), 1), MAX_BLOCK_THREADS)
    bounds: dict[tuple[str, str], int] = {}
    for func in module.regions[0].block.ops:
        if func.name != "func.func":
            continue
        for op in func.walk():
            if op.name == "gpu.launch_func":
                key = (op.module, op.kernel)
                bounds[key] = max(bounds.get(key, 1), launch_threads(op, block_size))
    return bounds


def module_bounds(module: Operation, gpu_module_name: str, block_size: int) -> dict[str, int]:
    """Kernel name -> launch bound for the kernels of one ``gpu.module``."""
    return {kernel: threads for (name, kernel), threads in launch_bounds(module, block_size).items()
            if name == gpu_module_name}
