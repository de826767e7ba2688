"""Storage of shared variables: the arrays that live between calls of compiled functions.

A shared variable is a leaf of the expression graph (an IR value) bound to a ``SharedContainer``
holding its current NumPy array. Functions read containers when called and write the updated
arrays back after the call succeeded. The binding is kept here, below the front end, so that
``function()`` can tell a shared leaf (read from storage) from an input the user forgot to give.

>>> from lowering.ir.core import Block
>>> from lowering.ir.types import I64, TensorType
>>> leaf = Block([TensorType((), I64)]).args[0]
>>> box = SharedContainer(np.array(0), TensorType((), I64), "state")
>>> bind_shared(leaf, box)
>>> shared_container(leaf) is box
True
>>> box.set(3); box.get()
array(3)
"""
from __future__ import annotations

import itertools
import threading
import weakref

import numpy as np

from lowering.ir.core import Value
from lowering.ir.types import TensorType

from .values import filter_value


def _floatx() -> str:
    from lowering.config import config  # flags sit below every layer; read at call time
    return config.floatX


class SharedContainer:
    """The current value of one shared variable.

    ``strict`` and ``allow_downcast`` say how ``set`` casts new values (as ``filter_value``);
    ``default_update`` is a graph value applied as the update when a function reads the variable
    and gives it no explicit update (unless ``no_default_updates``).
    """

    __slots__ = ("value", "type", "name", "strict", "allow_downcast", "default_update",
                 "lock", "lock_rank", "__weakref__")

    def __init__(self, value: np.ndarray, type: TensorType, name: str | None = None,
                 strict: bool = False, allow_downcast: bool | None = None):
        self.type = type
        self.name = name
        self.strict = strict
        self.allow_downcast = allow_downcast
        self.default_update = None
        # Held by every call reading or updating the variable (see ``Function``).
        self.lock, self.lock_rank = threading.RLock(), lock_rank()
        self.value = filter_value(value, type, self.describe(), strict=strict,
                                  allow_downcast=allow_downcast, floatx=_floatx())

    def describe(self) -> str:
        if self.name:
            return f"shared variable '{self.name}'"
        return f"shared variable of type {self.type}"

    def get(self, borrow: bool = False) -> np.ndarray:
        """The current array: the stored one itself with ``borrow``, else a copy."""
        return self.value if borrow else self.value.copy()

    def set(self, data, borrow: bool = False) -> None:
        """Store ``data`` (cast by the variable's rules); without ``borrow`` the caller's array is
        copied, so later changes to it do not reach the variable."""
        array = filter_value(data, self.type, self.describe(), strict=self.strict,
                             allow_downcast=self.allow_downcast, floatx=_floatx())
        if array is data and not borrow:
            array = array.copy()
        with self.lock:  # not in the middle of a call that reads or updates the variable
            self.value = array

    # Pickling (with the functions using it: pickle keeps one container shared between them).
    # The lock is the process's, and ``default_update`` a graph already compiled into them.

    def __getstate__(self):
        state = {}
        for cls in type(self).__mro__:
            for slot in getattr(cls, "__slots__", ()):
                if slot not in ("lock", "lock_rank", "default_update", "__weakref__") and \
                        hasattr(self, slot):
                    state[slot] = getattr(self, slot)
        return state

    def __setstate__(self, state):
        self.lock, self.lock_rank = threading.RLock(), lock_rank()
        self.default_update = None
        for slot, value in state.items():
            setattr(self, slot, value)


_LOCK_RANKS = itertools.count()


def lock_rank() -> int:
    """A new rank in the one process-wide order of call locks: a call holding several locks
    (its shared variables', its compiled code's) takes them by rank, so two calls never wait
    for each other in a cycle.

    >>> lock_rank() < lock_rank()
    True
    """
    return next(_LOCK_RANKS)


_CONTAINERS: "weakref.WeakKeyDictionary[Value, SharedContainer]" = weakref.WeakKeyDictionary()


def bind_shared(value: Value, container: SharedContainer) -> None:
    """Make graph leaf ``value`` a shared variable stored in ``container``."""
    if value.type != container.type:
        raise TypeError(f"cannot bind a {container.type} container to a value of type {value.type}")
    _CONTAINERS[value] = container


def shared_container(value: Value) -> SharedContainer | None:
    """The container of a shared leaf, or None for any other value."""
    return _CONTAINERS.get(value)
