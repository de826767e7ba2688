"""Shared variables: symbolic variables that also hold a value, kept between function calls.

``shared(value)`` makes a leaf of the graph (like an input) whose array lives in a
``SharedContainer``. Functions read it implicitly and may update it (``updates=``). Its type follows
the value: an ndarray keeps its dtype and rank (every dimension not broadcastable, so later values
may have other sizes), a Python ``int`` is an int64 scalar, a Python ``float`` a float64 scalar and
a NumPy scalar keeps its dtype.

>>> import numpy as np
>>> state = shared(0)
>>> state
<TensorType(int64, scalar)>
>>> state.set_value(1); state.get_value()
array(1)
>>> w = shared(np.zeros(3, dtype="float32"), name="w")
>>> w, str(w.type)
(w, 'TensorType(float32, vector)')
"""
from __future__ import annotations

import numbers

import numpy as np

from lowering.compile.gpu.arrays import is_device_array, to_host_array
from lowering.compile.graph_to_module import check_update_type
from lowering.compile.shared_storage import SharedContainer, bind_shared, shared_container
from lowering.ir.core import Block
from lowering.ir.types import TensorType as IRTensorType
from lowering.ir.types import scalar_type_of

from .device_shared import DeviceSharedContainer, HostSharedContainer, placement
from .gpu import device_copy
from .variable import LEAF_VIEWS, TensorVariable, Variable


class SharedVariable(TensorVariable):
    """A variable with a value (``get_value``/``set_value``), read by every function using it.

    ``container`` holds the value; ``default_update`` (a variable of the same type, or None) is
    the update a function applies when it reads this variable and has no update for it.
    """

    def __init__(self, container: SharedContainer, name: str | None = None):
        leaf = Block().add_arg(container.type, name)
        super().__init__(leaf, name)
        bind_shared(leaf, container)
        self.container = container

    def get_value(self, borrow: bool = False, return_internal_type: bool = False) -> np.ndarray:
        """The current value: a copy, or with ``borrow=True`` (or ``return_internal_type``) the
        stored array itself (changing it in place changes the variable). A variable resident on
        a GPU gives a host copy; with ``borrow`` its device array itself, with
        ``return_internal_type`` alone a copy on the device."""
        container = self.container
        if return_internal_type and not borrow and isinstance(container, DeviceSharedContainer):
            return device_copy(container.get(borrow=True), container.target)
        return container.get(borrow)

    def set_value(self, value, borrow: bool = False) -> None:
        """Store a new value, cast as Theano casts (a Python int into an int64 variable, a
        float64 array into a float32 variable only with ``allow_downcast``); without ``borrow``
        the array is copied, so changing it later does not change the variable."""
        self.container.set(value, borrow)

    def __reduce__(self):
        """A shared variable pickles as its container (the value) and name; pickled with
        functions using it (in one ``pickle.dumps``), it comes back sharing their container."""
        if self.default_update is not None:
            raise TypeError(f"cannot pickle shared variable {self}: it has a default_update "
                            f"(a graph); pickle the functions using it instead")
        return _restore_shared_variable, (self.container, self.name)

    @property
    def default_update(self):
        return getattr(self, "_default_update", None)

    @default_update.setter
    def default_update(self, update):
        if update is None:
            self._default_update = self.container.default_update = None
            return
        if not isinstance(update, TensorVariable):
            raise TypeError(f"default_update of {self} must be a symbolic variable, got "
                            f"{type(update).__name__}")
        check_update_type(self.value, update.value, str(self))
        self._default_update = update
        self.container.default_update = update.value


def _shared_leaf_variable(value) -> SharedVariable | None:
    """The variable of a shared leaf whose ``SharedVariable`` is gone (a leaf of a graph copied
    by ``theano.clone``): a new one on the same leaf and storage."""
    container = shared_container(value)
    if container is None:
        return None
    variable = SharedVariable.__new__(SharedVariable)
    TensorVariable.__init__(variable, value)
    variable.container = container
    return variable


LEAF_VIEWS.append(_shared_leaf_variable)


def _restore_shared_variable(container: SharedContainer, name: str | None) -> SharedVariable:
    return SharedVariable(container, name)


# Constructors of shared variables for values that are not arrays (as Theano's
# ``shared_constructor``): each returns a variable, or None when the value is not its kind.
SHARED_CONSTRUCTORS: list = []


def shared(value, name: str | None = None, strict: bool = False,
           allow_downcast: bool | None = None, borrow: bool = False, target=None,
           broadcastable=None) -> SharedVariable:
    """A shared variable holding ``value`` (an ndarray or a number), as ``theano.shared``.

    ``borrow=True`` keeps the caller's array (no copy); ``strict``/``allow_downcast`` say how
    ``set_value`` casts; ``broadcastable`` marks dimensions of size 1 that broadcast; ``target``
    names the device: ``'cpu'``, or a GPU context (``'dev1'`` from the ``contexts`` flag,
    ``'cuda'``). Without a target, values other than integer and boolean scalars live on the
    default GPU context when the ``device`` flag asks for a GPU (see
    ``lowering.frontend.device_shared``).

    >>> shared(2.5).type, shared(np.float32(1)).type, shared(True).dtype
    (TensorType(float64, scalar), TensorType(float32, scalar), 'bool')
    """
    if isinstance(value, TensorVariable):
        raise TypeError(f"shared() needs a value (an array or a number), not the symbolic "
                        f"variable {value}")
    for make in SHARED_CONSTRUCTORS:  # other kinds of values (scipy.sparse matrices)
        made = make(value, name=name, strict=strict, allow_downcast=allow_downcast,
                    borrow=borrow)
        if made is not None:
            return made
    if is_device_array(value):  # a device array: its values, on the device asked for
        array, borrow = to_host_array(value), True
    else:
        array = _as_array(value, borrow)
    pattern = (False,) * array.ndim if broadcastable is None else tuple(map(bool, broadcastable))
    if len(pattern) != array.ndim:
        raise ValueError(f"shared(): broadcastable {tuple(broadcastable)} has {len(pattern)} "
                         f"entries for a value of rank {array.ndim}")
    ir_type = IRTensorType(tuple(1 if b else None for b in pattern), scalar_type_of(array.dtype))
    where = placement(array, target)
    if where == "cpu":
        container = HostSharedContainer(array, ir_type, name, strict=strict,
                                        allow_downcast=allow_downcast)
    else:
        container = DeviceSharedContainer(array, ir_type, name, strict=strict,
                                          allow_downcast=allow_downcast, target=where)
    return SharedVariable(container, name)


def _as_array(value, borrow: bool) -> np.ndarray:
    if isinstance(value, np.ndarray):
        array = value if borrow else value.copy()
    elif isinstance(value, (numbers.Number, np.generic)) and not isinstance(value, complex):
        array = np.array(value)  # int -> int64, float -> float64, NumPy scalars keep their dtype
    else:
        raise TypeError(f"shared() needs a NumPy array or a number, got {type(value).__name__}; "
                        f"convert it with numpy.asarray first")
    try:
        scalar_type_of(array.dtype)
    except TypeError:
        raise TypeError(f"shared(): unsupported dtype {array.dtype}") from None
    return array


# Theano's path for these names, ``theano.compile.sharedvalue``, is a module of a lower layer:
# the front end gives it its names.
from lowering.compile import sharedvalue as _theano_path  # noqa: E402

_theano_path.SharedVariable, _theano_path.shared, _theano_path.Variable = \
    SharedVariable, shared, Variable
