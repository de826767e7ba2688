"""Copies between host and device through page-locked staging buffers, on the strict driver
stand-in: asynchronous copies need page-locked memory and a stream, queued copies run in
stream order, staging buffers are reused across calls and freed with the context."""
from __future__ import annotations

import numpy as np
import pytest

import lowering as theano
import lowering.tensor as T


def test_async_copies_need_page_locked_memory_and_a_stream(standin):
    drv = standin.driver
    drv.init()
    context = drv.Device(0).retain_primary_context()
    context.push()
    try:
        block = drv.mem_alloc(64)
        stream = drv.Stream()
        with pytest.raises(drv.LogicError, match="pageable"):
            drv.memcpy_htod_async(block, np.ones(16, np.float32), stream)
        pinned = drv.pagelocked_empty((16,), np.float32)
        with pytest.raises(drv.LogicError, match="no stream"):
            drv.memcpy_htod_async(block, pinned)
        pinned[...] = 3
        drv.memcpy_htod_async(block, pinned, stream)
        pinned[...] = 4  # before the stream ran the copy: the copy reads 4
        back = drv.register_host_memory(np.zeros(16, np.float32))
        drv.memcpy_dtoh_async(back, block, stream)
        assert not back.any()  # queued: nothing has arrived before the wait
        stream.synchronize()
        np.testing.assert_array_equal(back, 4)
        assert drv.pinned_ranges() == 2
        back.base.unregister()
        pinned.base.free()
        assert drv.pinned_ranges() == 0
        with pytest.raises(drv.LogicError, match="twice"):
            pinned.base.free()
    finally:
        drv.Context.pop()


def test_copies_of_one_size_in_a_row_each_keep_their_values(cuda):
    # Both copies take the same staging buffer: the second waits for the first's event.
    a, b = np.arange(8, dtype=np.float32), -np.arange(8, dtype=np.float32)
    da, db = cuda.to_device(a), cuda.to_device(b)
    np.testing.assert_array_equal(cuda.to_host(da), a)
    np.testing.assert_array_equal(cuda.to_host(db), b)
    strided = np.arange(24, dtype=np.float64).reshape(4, 6)[::-1, ::2]
    np.testing.assert_array_equal(cuda.to_host(cuda.to_device(strided)), strided)
    np.testing.assert_array_equal(cuda.to_host(cuda.view(da, (3,), (-2,), 6)), a[6::-2][:3])


def test_staging_buffers_are_reused_across_calls_and_freed_with_the_context(cuda, standin):
    from lowering.llvm.gpu.cuda_runtime import _close_all
    x = T.fmatrix("x")
    f = theano.function([x], T.exp(x).sum(axis=1))
    data = np.linspace(-1, 1, 24, dtype=np.float32).reshape(4, 6)
    f(data)
    staging = cuda.cuda.staging
    made = staging.allocated
    assert made >= 1 and standin.driver.pinned_ranges() == made
    for k in range(3):
        np.testing.assert_allclose(f(data * k), np.exp(data * k).sum(axis=1), rtol=1e-5)
    assert staging.allocated == made and staging.held == made
    _close_all()
    assert standin.driver.pinned_ranges() == 0
