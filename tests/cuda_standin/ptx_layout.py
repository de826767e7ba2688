"""The kernels a PTX module declares: each ``.entry``'s ``.param`` list and launch bound.

>>> entries = parse_entries('''
... .visible .entry k(
...     .param .u64 .ptr .global .align 1 k_param_0,
...     .param .u16 k_param_1
... )
... .maxntid 128
... {
... ret;
... }''')
>>> entries["k"].params, entries["k"].max_threads
(('u64', 'u16'), 128)
>>> decode_params(entries["k"].params, bytes(range(10)))[1]
2312
"""
from __future__ import annotations

import re
import struct
from dataclasses import dataclass

_ENTRY = re.compile(r"\.entry\s+(\w+)\s*\((.*?)\)\s*([^{]*)\{", re.S)
_PARAM_TYPE = re.compile(r"\.([usbf](?:8|16|32|64))\b")
_MAXNTID = re.compile(r"\.maxntid\s+(\d+)(?:\s*,\s*(\d+))?(?:\s*,\s*(\d+))?")
_TARGET = re.compile(r"^\.target\s+(sm_\w+)", re.M)
_UNPACK = {"u8": "B", "u16": "H", "u32": "I", "u64": "Q", "s8": "b", "s16": "h", "s32": "i",
           "s64": "q", "b8": "B", "b16": "H", "b32": "I", "b64": "Q", "f32": "f", "f64": "d"}


@dataclass(frozen=True)
class Entry:
    """One kernel: its parameters' PTX types in order, and its ``.maxntid`` (None: none)."""

    name: str
    params: tuple[str, ...]
    max_threads: int | None


def parse_entries(ptx: str) -> dict[str, Entry]:
    """Every ``.entry`` of ``ptx`` by name."""
    found = {}
    for match in _ENTRY.finditer(ptx):
        name, params, directives = match.groups()
        types = []
        for param in filter(str.strip, params.split(",")):
            kind = _PARAM_TYPE.search(param)
            if kind is None:
                raise ValueError(f"kernel {name}: parameter {param.strip()!r} has no scalar type")
            types.append(kind.group(1))
        bound = _MAXNTID.search(directives)
        threads = None
        if bound is not None:
            threads = 1
            for size in bound.groups():
                threads *= int(size or 1)
        found[name] = Entry(name, tuple(types), threads)
    return found


def target_arch(ptx: str) -> str:
    """The ``.target`` architecture of a PTX module."""
    match = _TARGET.search(ptx)
    if match is None:
        raise ValueError("the PTX module declares no .target")
    return match.group(1)


def param_size(kind: str) -> int:
    return int(kind[1:]) // 8


def decode_params(params: tuple[str, ...], buffer: bytes) -> list:
    """The values of ``params`` read from a launch's argument buffer as the CUDA driver reads
    it: each parameter at the next offset aligned to its size. A buffer whose size differs
    from what the parameters take is refused (ValueError)."""
    values, offset = [], 0
    for kind in params:
        size = param_size(kind)
        offset = -(-offset // size) * size
        if offset + size > len(buffer):
            raise ValueError(f"the argument buffer has {len(buffer)} bytes; parameter "
                             f"{len(values)} (.{kind}) needs bytes {offset}..{offset + size}")
        values.append(struct.unpack_from("<" + _UNPACK[kind], buffer, offset)[0])
        offset += size
    if offset != len(buffer):
        raise ValueError(f"the argument buffer has {len(buffer)} bytes; the kernel's "
                         f".param list takes {offset}")
    return values


def ptx_offsets(params: tuple[str, ...]) -> list[tuple[int, int]]:
    """(offset, size) of each parameter in the argument buffer, as the driver lays them out."""
    found, offset = [], 0
    for kind in params:
        size = param_size(kind)
        offset = -(-offset // size) * size
        found.append((offset, size))
        offset += size
    return found


def format_offsets(format_: str) -> list[tuple[int, int]]:
    """(offset, size) of each value a prepared-call format packs (native ``struct`` alignment,
    as PyCUDA packs).

    >>> format_offsets("Pbd")
    [(0, 8), (8, 1), (16, 8)]
    """
    found = []
    for end in range(1, len(format_) + 1):
        size = struct.calcsize(format_[end - 1])
        found.append((struct.calcsize(format_[:end]) - size, size))
    return found


def check_format(params: tuple[str, ...], format_: str) -> None:
    """ValueError unless the host's format packs each value where, and as wide as, the PTX's
    ``.param`` list reads it."""
    host, device = format_offsets(format_), ptx_offsets(params)
    if len(host) != len(device):
        raise ValueError(f"the format {format_!r} packs {len(host)} values; the kernel's .param "
                         f"list has {len(device)}")
    for index, (packed, read) in enumerate(zip(host, device)):
        if packed != read:
            raise ValueError(f"the argument buffer has parameter {index} at bytes "
                             f"{packed[0]}+{packed[1]} (format {format_!r}); the kernel's .param "
                             f"list reads .{params[index]} at {read[0]}+{read[1]}")
