"""Philox in GPU kernels: the scalar ops of ``lowering.dialects.scalar.philox`` in a kernel,
translated by ``to-ptx``, assembled by ptxas and run on the host from the kernel's LLVM IR
(``test_ptx_emulation``), bit for bit against the reference interpreter, Random123's known
answers and NumPy's Philox4x64."""
from __future__ import annotations

import numpy as np
import pytest

from lowering.dialects import gpu, loops
from lowering.dialects.scalar.philox import Emitter, philox4x32, philox4x64
from lowering.dialects.loops.types import BufferType
from lowering.llvm.gpu.ptxas import assemble_ptx, ptxas_available
from lowering.llvm.gpu.to_ptx import translate_gpu_module
from lowering.ir.types import UI32, UI64

from test_ptx_emulation import EmulatedKernels, run_both

THREADS, BLOCKS = 32, 2
SIZE = THREADS * BLOCKS


def philox_module(word, generator) -> gpu.GpuModuleOp:
    """A kernel ``out_j[i] = generator(counter words[i], key words[i])[j]``, one thread per i."""
    buffer = BufferType((None,), word, memory_space="device")

    def body(b, *args):
        i = b.insert(gpu.BlockIdOp.build("x")).result
        d = b.insert(gpu.BlockDimOp.build("x")).result
        t = b.insert(gpu.ThreadIdOp.build("x")).result
        from lowering.dialects.scalar import AddOp, MulOp
        i = b.insert(AddOp.build(b.insert(MulOp.build(i, d)).result, t)).result
        words = [b.insert(loops.LoadOp.build(a, [i])).result for a in args[:6]]
        outputs = generator(Emitter(b.insert), words[:4], words[4:])
        for value, out in zip(outputs, args[6:]):
            b.insert(loops.StoreOp.build(value, out, [i]))

    kernel = gpu.GpuFuncOp.build("philox", [buffer] * 10, body)
    return gpu.GpuModuleOp.build("random", [kernel])


def inputs(word, rng):
    bits = 8 * word.dtype.itemsize
    return [rng.integers(0, 2 ** bits, SIZE, dtype=word.dtype) for _ in range(6)]


@pytest.mark.parametrize("word, generator", [(UI32, philox4x32), (UI64, philox4x64)])
def test_the_kernel_code_gives_the_interpreters_bits(word, generator):
    module = philox_module(word, generator)
    args = inputs(word, np.random.default_rng(7)) + [np.zeros(SIZE, word.dtype)
                                                     for _ in range(4)]
    if word == UI32:  # the first thread computes Random123's first known answer
        for a in args[:6]:
            a[0] = 0
    reference, ours = run_both(module, "philox", BLOCKS, THREADS, args)
    for j in range(6, 10):
        np.testing.assert_array_equal(ours[j], reference[j])
    if word == UI32:
        assert [int(o[0]) for o in ours[6:]] == [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]
    else:
        key, counter = [int(ours[4][1]), int(ours[5][1])], [int(a[1]) for a in ours[:4]]
        value = (sum(c << (64 * n) for n, c in enumerate(counter)) - 1) % (1 << 256)
        state = np.array([(value >> (64 * n)) & (2 ** 64 - 1) for n in range(4)], np.uint64)
        want = np.random.Philox(key=np.array(key, np.uint64), counter=state).random_raw(4)
        assert [int(o[1]) for o in ours[6:]] == [int(w) for w in want]


@pytest.mark.skipif(not ptxas_available(), reason="ptxas (CUDA toolkit) not found")
@pytest.mark.parametrize("word, generator", [(UI32, philox4x32), (UI64, philox4x64)])
def test_the_kernel_assembles_with_ptxas_and_shifts_instead_of_dividing(word, generator):
    ptx = translate_gpu_module(philox_module(word, generator), arch="sm_80").ptx
    assert assemble_ptx(ptx, "sm_80")
    # The divisions by powers of two that take high words are shifts, never divisions.
    assert "div." not in ptx and "rem." not in ptx
    if word == UI32:  # one widening multiply per round and multiplier
        assert ptx.count("mul.wide.u32") >= 20
