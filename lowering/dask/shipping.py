"""Sending a compiled ``Function`` to Dask workers so that each worker process builds it once.

Dask pickles a task's arguments for every task it sends. A ``Function`` pickles as its
tensor-level module (text) and is built again on unpickling, through the disk cache
(docs/reliability.md): cheap next to LLVM, but not free per block. ``ShippedFunction`` pickles
the function once on the driver and travels as those bytes and their SHA-256; a worker process
keeps the functions it built by that hash (``_BUILT``), so every later task carrying the same
function reuses the one it built. The hash covers the whole pickle (module, options and shared
variables' values), so a function whose shared values changed is a new function.

>>> import pickle
>>> import lowering as theano
>>> import lowering.tensor as T
>>> x = T.vector("x")
>>> shipped = ShippedFunction(theano.function([x], x * 2))
>>> first = pickle.loads(pickle.dumps(shipped))
>>> second = pickle.loads(pickle.dumps(shipped))
>>> first.function is second.function, first.function([1.0]).tolist()
(True, [2.0])
"""
from __future__ import annotations

import collections
import hashlib
import pickle
import threading

__all__ = ["ShippedFunction", "builds", "check_pure"]

# Functions built in this process from shipped bytes, by hash, least recently used first.
_BUILT: "collections.OrderedDict[str, object]" = collections.OrderedDict()
_BUILT_MAX = 64
_BUILDS: collections.Counter = collections.Counter()  # hash -> times built in this process
_LOCK = threading.Lock()


class ShippedFunction:
    """A compiled function as Dask ships it: ``function`` here, built at most once per worker
    process there (see the module's docstring)."""

    def __init__(self, function, payload: bytes | None = None, key: str | None = None):
        self.function = function
        self._payload = payload
        self._key = key

    @property
    def key(self) -> str:
        """The SHA-256 of the function's pickle: its identity across processes."""
        self._pickled()
        return self._key

    def _pickled(self) -> bytes:
        if self._payload is None:
            self._payload = pickle.dumps(self.function, protocol=pickle.HIGHEST_PROTOCOL)
            self._key = hashlib.sha256(self._payload).hexdigest()
        return self._payload

    def __reduce__(self):
        payload = self._pickled()
        return _receive, (self._key, payload)

    def __call__(self, *args):
        return self.function(*args)


def _receive(key: str, payload: bytes) -> ShippedFunction:
    """The function of ``key``: the one this process built before, or built now."""
    with _LOCK:
        function = _BUILT.get(key)
        if function is not None:
            _BUILT.move_to_end(key)
            return ShippedFunction(function, payload, key)
    function = pickle.loads(payload)  # outside the lock: building may take a while
    with _LOCK:
        if key not in _BUILT:
            _BUILT[key] = function
            _BUILDS[key] += 1
            while len(_BUILT) > _BUILT_MAX:
                _BUILT.popitem(last=False)
        return ShippedFunction(_BUILT[key], payload, key)


def builds(key: str | None = None) -> int:
    """How many times this process built the shipped function ``key`` (all of them when None):
    a worker that reused its function for every block reports 1.

    >>> builds("0" * 64)
    0
    """
    with _LOCK:
        return _BUILDS[key] if key is not None else sum(_BUILDS.values())


def check_pure(function, what: str) -> None:
    """Refuse a function with updates: its workers' copies of the shared variables would each
    change on their own, in an order that depends on the schedule.

    >>> import lowering as theano
    >>> import lowering.tensor as T
    >>> x, acc = T.dscalar("x"), theano.shared(0.0)
    >>> check_pure(theano.function([x], x, updates={acc: acc + x}), "map_blocks")
    Traceback (most recent call last):
    ...
    ValueError: map_blocks needs a function without updates; 'function' updates 1 shared variable
    """
    updated = len(function._targets) + len(function._states)
    if updated:
        raise ValueError(f"{what} needs a function without updates; '{function.name}' updates "
                         f"{updated} shared variable{'s' if updated > 1 else ''}")
