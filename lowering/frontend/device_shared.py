"""Shared variables resident on a GPU: their value is a device array between calls.

``shared(value)`` puts the value on the default GPU context when the ``device`` flag asks for a
GPU, unless it is an integer or boolean scalar (``shared(0)`` is a host int64 scalar, as in
Theano); ``shared(value, target='dev1')`` puts it on a named context (``contexts`` flag), and
``target='cpu'`` on the host. The place is decided once, when the variable is made. A compiled
function reads a resident variable on the device and writes its update there: no copy between
calls.

``get_value()`` copies the value to a host array; ``get_value(borrow=True)`` gives the device
array itself. ``set_value`` takes host arrays (copied to the device) and device arrays (used
as they are with ``borrow=True``, else copied on the device).

>>> import numpy as np
>>> from lowering.config import config
>>> from lowering.frontend.shared import shared
>>> with config.change_flags({"gpuarray.simulate": True}, device="cuda"):
...     w = shared(np.ones(3, "float32"))
...     w.container.target, type(w.get_value(borrow=True)).__name__, w.get_value()
('cuda', 'SimulatedGpuArray', array([1., 1., 1.], dtype=float32))
"""
from __future__ import annotations

import numpy as np

from lowering.compile.gpu.arrays import is_device_array, to_host_array
from lowering.compile.shared_storage import SharedContainer, _floatx
from lowering.compile.values import filter_value

from . import gpu
from .transfer import check_target, context_name


def placement(array: np.ndarray, target) -> str:
    """Where a new shared variable holding ``array`` lives: ``'cpu'`` or a context name.

    >>> from lowering.config import config
    >>> placement(np.zeros(2), None), placement(np.zeros(2), "cpu")
    ('cpu', 'cpu')
    >>> with config.change_flags(device="cuda"):
    ...     placement(np.zeros(2), None), placement(np.array(0), None)
    ('cuda', 'cpu')
    """
    try:
        check_target(target)
    except ValueError as exc:
        raise ValueError(f"shared(target={target!r}) names no GPU context: {exc}") from None
    if target is not None:
        return context_name(target)
    if gpu.gpu_device_flag() and not (array.ndim == 0 and array.dtype.kind in "biu"):
        return context_name(None)
    return "cpu"


class HostSharedContainer(SharedContainer):
    """A ``SharedContainer`` that says it lives on the host (``target``), whatever flags say
    later."""

    __slots__ = ()
    target = "cpu"


class DeviceSharedContainer(SharedContainer):
    """A ``SharedContainer`` whose value is a device array on context ``target``.

    ``value`` (what compiled functions read and write) is always a device array: host arrays
    assigned to it are copied to the device.
    """

    __slots__ = ("target", "_device_value")

    def __init__(self, value: np.ndarray, type, name=None, strict=False, allow_downcast=None,
                 target: str = "cuda"):
        gpu.require_gpu(f"a shared variable on GPU context {target!r}")
        self.target = target
        super().__init__(value, type, name, strict=strict, allow_downcast=allow_downcast)

    @property
    def value(self):
        return self._device_value

    @value.setter
    def value(self, data) -> None:
        # Compiled functions store their device results here after each call: no checks then.
        self._device_value = data if is_device_array(data) else gpu.to_device(data, self.target)

    def get(self, borrow: bool = False):
        """The device array itself with ``borrow``, else a host copy of it."""
        return self._device_value if borrow else to_host_array(self._device_value)

    def set(self, data, borrow: bool = False) -> None:
        """Store ``data``: a host value is cast by the variable's rules and copied to the device;
        a device array must have the variable's dtype and rank, and is kept (``borrow``) or
        copied on the device."""
        if not is_device_array(data):
            self.value = filter_value(data, self.type, self.describe(), strict=self.strict,
                                      allow_downcast=self.allow_downcast, floatx=_floatx())
            return
        self._check_device_array(data)
        self._device_value = gpu.to_device(data, self.target) if borrow else \
            gpu.device_copy(data, self.target)

    def _check_device_array(self, data) -> None:
        want = self.type
        if np.dtype(data.dtype) != np.dtype(want.dtype) or len(data.shape) != want.rank or \
                not want.accepts_shape(tuple(data.shape)):
            raise TypeError(f"{self.describe()} holds {want}; got a device array of dtype "
                            f"{data.dtype} and shape {tuple(data.shape)} (device arrays are not "
                            f"cast: convert it first)")
