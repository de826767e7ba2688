"""The memory model of a profiled function: peak memory of its intermediate buffers.

A profiled call records the size in bytes of every node's results. From those sizes and the
order of the nodes, this module computes the peak memory the intermediate buffers take, the way
Theano's memory profile does:

- every node result is *created* (a new buffer of its size, allocated when the node runs), a
  *view* of an operand (``dimshuffle``, basic indexing, ``reshape``: no memory of its own, as
  ``bufferize`` makes them), or *inplace*: written into an operand's buffer (no memory of its own;
  what the compiler decided for the whole function, ``f.maker.inplace_patterns``);
- a buffer lives from the node that creates it until the last node that reads it or any view or
  in-place result of it; a buffer the function returns lives to the end of the call;
- the function's arguments (inputs, shared variables) and constants exist before the call and
  are not counted;
- with ``allow_gc=True`` a buffer is freed right after its last reader, so the peak is the
  largest sum of live buffers just after a node allocated its results; with ``allow_gc=False``
  nothing is freed during the call (the workspace is kept between calls): the peak is the sum of
  every created buffer.

Three peaks are reported: with the current settings (``allow_gc`` and the inplace decisions in
the IR), without inplace (every inplace result counted as created), and with ``allow_gc=False``.

>>> nodes = [NodeBuffers(reads=(0,), results=(1,), storage=(CREATED,)),
...          NodeBuffers(reads=(1,), results=(2,), storage=(CREATED,)),
...          NodeBuffers(reads=(2,), results=(3,), storage=((INPLACE, 0),))]
>>> sizes = {1: 100, 2: 100, 3: 100}
>>> peak_memory(nodes, sizes, returned=(3,), allow_gc=True)
200
>>> peak_memory(nodes, sizes, returned=(3,), allow_gc=True, inplace=False)
200
>>> [peak_memory(nodes, sizes, returned=(3,), allow_gc=False, inplace=flag)
...  for flag in (True, False)]
[200, 300]
"""
from __future__ import annotations

from dataclasses import dataclass

from lowering.ir.core import Operation

CREATED = "c"
VIEW = "v"
INPLACE = "i"

# Ops whose result is a view of their first operand once bufferized (no copy, no memory).
VIEW_OPS = frozenset({"tensor.dimshuffle", "tensor.subtensor", "tensor.reshape"})



def result_storage(op: Operation, inplace_pattern: dict[int, int] | None = None) -> tuple:
    """How each result of ``op`` gets its memory: ``CREATED``, ``(VIEW, operand)`` or
    ``(INPLACE, operand)``; ``inplace_pattern`` (``{result: operand}``) is what the compiler
    computed in an operand's memory (``f.maker.inplace_patterns``).

    >>> op = Operation.create(result_types=[None, None])
    >>> result_storage(op, {1: 0})
    ('c', ('i', 0))
    """
    pattern = inplace_pattern or {}
    storage = []
    for index in range(len(op.results)):
        if index in pattern:
            storage.append((INPLACE, pattern[index]))
        elif op.name in VIEW_OPS and index == 0:
            storage.append((VIEW, 0))
        else:
            storage.append(CREATED)
    return tuple(storage)


def storage_code(storage) -> str:
    """The letter Theano prints for a result: ``c`` (created), ``v`` (view), ``i`` (inplace)."""
    return storage if isinstance(storage, str) else storage[0]


@dataclass(frozen=True)
class NodeBuffers:
    """What the memory model needs of one node: the value slots it reads (in operand order for
    ``storage``'s operand numbers), the slots of its results, and each result's storage."""

    reads: tuple[int, ...]
    results: tuple[int, ...]
    storage: tuple
    device: str = "cpu"  # where its results live: "cpu" or "gpu"


def _owners(nodes: list[NodeBuffers], inplace: bool) -> dict[int, int]:
    """The slot owning the memory of each result slot (itself when created)."""
    owner: dict[int, int] = {}
    for node in nodes:
        for slot, storage in zip(node.results, node.storage):
            code = storage_code(storage)
            if code == CREATED or (code == INPLACE and not inplace):
                owner[slot] = slot
            else:
                operand = node.reads[storage[1]] if storage[1] < len(node.reads) else None
                owner[slot] = owner.get(operand, -1)  # -1: an argument's memory, not counted
    return owner


def peak_memory(nodes: list[NodeBuffers], sizes: dict[int, int], returned=(),
                allow_gc: bool = True, inplace: bool = True, device: str | None = None) -> int:
    """Peak bytes of the intermediate buffers while ``nodes`` run in order, each result slot
    having ``sizes[slot]`` bytes; ``returned`` slots live to the end. ``device`` counts only the
    buffers of nodes on that device (None: all)."""
    owner = _owners(nodes, inplace)
    created = [slot for slot, own in owner.items() if own == slot]
    device_of = {slot: node.device for node in nodes for slot in node.results}
    counted = [s for s in created if device is None or device_of[s] == device]
    if not allow_gc:
        return sum(sizes.get(s, 0) for s in counted)
    last_use = {slot: -1 for slot in created}
    for position, node in enumerate(nodes):
        for slot in (*node.reads, *node.results):
            buffer = owner.get(slot)
            if buffer is not None and buffer in last_use:
                last_use[buffer] = max(last_use[buffer], position)
    keep = {owner[s] for s in returned if owner.get(s, -1) in last_use}
    frees: dict[int, list[int]] = {}
    for buffer, position in last_use.items():
        if buffer not in keep:
            frees.setdefault(position, []).append(buffer)
    counted_set = set(counted)
    running = peak = 0
    for position, node in enumerate(nodes):
        running += sum(sizes.get(s, 0) for s in node.results if s in counted_set)
        peak = max(peak, running)
        running -= sum(sizes.get(b, 0) for b in frees.get(position, ()) if b in counted_set)
    return peak


@dataclass(frozen=True)
class MemoryPeaks:
    """The three peaks of the memory profile, per device (bytes)."""

    current: dict[str, int]
    without_inplace: dict[str, int]
    without_gc: dict[str, int]


def memory_peaks(nodes: list[NodeBuffers], sizes: dict[int, int], returned,
                 allow_gc: bool) -> MemoryPeaks:
    """The peaks with the current settings, without inplace, and with ``allow_gc=False``, each
    for ``"cpu"``, ``"gpu"`` and ``"all"``.

    >>> nodes = [NodeBuffers((0,), (1,), (CREATED,)), NodeBuffers((1,), (2,), (CREATED,))]
    >>> memory_peaks(nodes, {1: 8, 2: 8}, returned=(2,), allow_gc=True).current
    {'cpu': 16, 'gpu': 0, 'all': 16}
    """
    def per_device(**options) -> dict[str, int]:
        return {name: peak_memory(nodes, sizes, returned, device=device, **options)
                for name, device in (("cpu", "cpu"), ("gpu", "gpu"), ("all", None))}

    return MemoryPeaks(per_device(allow_gc=allow_gc, inplace=True),
                       per_device(allow_gc=allow_gc, inplace=False),
                       per_device(allow_gc=False, inplace=True))
