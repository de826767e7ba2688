"""Device arrays of "another library" over the stand-in's memory, for the interop tests: what a
CuPy or PyTorch tensor or a Numba device array exports, through one protocol each
(``CudaInterfaceArray``: ``__cuda_array_interface__`` v3; ``DLPackArray``: ``__dlpack__`` on
``kDLCUDA``). Each fills its memory with an asynchronous copy queued on a stream of its own,
so a consumer that does not follow the protocol's stream rules reads memory not yet written.
"""
from __future__ import annotations

import numpy as np


class _Producer:
    """Device memory in device ``ordinal``'s primary context (the one libraries share),
    written from ``host`` on the producer's own stream (still queued)."""

    def __init__(self, host, ordinal: int = 0, strides=None):
        import pycuda.driver as drv
        self._drv = drv
        host = np.ascontiguousarray(host)
        self.dtype, self.nbytes = host.dtype, host.nbytes
        self.shape = host.shape
        self.strides = strides  # bytes, None: C order (a view of a bigger allocation)
        span = host.nbytes if strides is None else \
            sum((n - 1) * s for n, s in zip(self.shape, strides)) + host.itemsize
        self.context = drv.Device(ordinal).retain_primary_context()
        self.context.push()
        try:
            self.memory = drv.mem_alloc(max(span, 1))
            self.stream = drv.Stream()
            staging = drv.pagelocked_empty((max(span, 1),), np.uint8)
            if strides is None:
                staging[:host.nbytes] = host.reshape(-1).view(np.uint8)
            else:
                view = np.lib.stride_tricks.as_strided(
                    staging.view(host.dtype), self.shape, strides)
                view[...] = host
            drv.memcpy_htod_async(self.memory, staging, self.stream)
            self._staging = staging
            self.ready = drv.Event()
            self.ready.record(self.stream)
        finally:
            drv.Context.pop()
        self.streams_given: list = []

    @property
    def pointer(self) -> int:
        return int(self.memory)


class CudaInterfaceArray(_Producer):
    """Exports ``__cuda_array_interface__`` version 3, naming its stream."""

    def __init__(self, host, typestr=None, readonly=False, stream="own", mask=None, **kw):
        super().__init__(host, **kw)
        self.typestr = typestr or self.dtype.str
        self.readonly = readonly
        self.given_stream = self.stream.handle if stream == "own" else stream
        self.mask = mask

    @property
    def __cuda_array_interface__(self) -> dict:
        return {"shape": self.shape, "typestr": self.typestr, "version": 3,
                "data": (self.pointer, self.readonly), "strides": self.strides,
                "stream": self.given_stream, "mask": self.mask}


class DLPackArray(_Producer):
    """Exports ``__dlpack__``/``__dlpack_device__`` (``kDLCUDA``); on ``__dlpack__(stream=s)``
    it makes stream ``s`` wait for its own work, as the protocol asks of a producer."""

    def __init__(self, host, device_id=None, code=None, **kw):
        super().__init__(host, **kw)
        self.device_id = device_id
        self.code = code  # a DLPack dtype (code, bits, lanes) to claim instead of its own

    def __dlpack_device__(self):
        return 2, self.context.get_device().ordinal if self.device_id is None else self.device_id

    def __dlpack__(self, stream=None, **kw):
        from lowering.compile.gpu import dlpack
        self.streams_given.append(stream)
        consumer = self._drv.stream_of_handle(stream) if isinstance(stream, int) else None
        if consumer is None:
            raise ValueError(f"__dlpack__: stream {stream!r} is no stream of this device")
        self.context.push()
        try:
            consumer.wait_for_event(self.ready)
        finally:
            self._drv.Context.pop()
        itemsize = self.dtype.itemsize
        strides = None if self.strides is None else [s // itemsize for s in self.strides]
        capsule = dlpack.to_capsule(self.pointer, self.shape, strides, self.dtype,
                                    self.__dlpack_device__(), self)
        if self.code is not None:  # rewrite the dtype the capsule claims
            tensor = dlpack.DLManagedTensor.from_address(
                dlpack._get(capsule, dlpack.ctypes.cast(dlpack._NAME, dlpack.ctypes.c_char_p)))
            tensor.dl_tensor.dtype = dlpack.DLDataType(*self.code)
        return capsule
