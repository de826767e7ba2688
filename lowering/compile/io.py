"""``In`` and ``Out``: how a function's inputs and outputs are given, as in ``theano.In``/``Out``.

``In(x, value=..., name=...)`` gives an input a default (callers may then leave it out) and the
keyword it is passed by; with ``update=expr`` the default is state that each call replaces with
``expr`` (computed from the call's inputs). ``Out(y, borrow=True)`` lets the function return its
own buffer instead of a copy.

>>> from lowering.ir.core import Block
>>> from lowering.ir.types import F64, TensorType
>>> x = Block([TensorType((), F64)]).args[0]
>>> In(x, value=1.5, name="rate")
In(rate, value=1.5)
"""
from __future__ import annotations

from lowering.ir.core import Value


def graph_value(variable, what: str = "variable") -> Value:
    """The IR value a front-end variable (anything with ``.value``) or a raw Value stands for."""
    if isinstance(variable, Value):
        return variable
    value = getattr(variable, "value", None)
    if isinstance(value, Value):
        return value
    raise TypeError(f"{what} must be a symbolic variable, got {type(variable).__name__} "
                    f"{_short(variable)}")


def variable_name(variable) -> str | None:
    """The user's name of a variable (its ``name``, else its IR value's name hint)."""
    name = getattr(variable, "name", None)
    if isinstance(name, str) and name:
        return name
    return graph_value(variable).name_hint


def _short(obj) -> str:
    text = repr(obj)
    return text if len(text) <= 60 else text[:57] + "..."


class In:
    """An input of ``function()`` with options.

    ``value``: default used when the caller does not pass the input; ``update``: expression whose
    value replaces the default after each call (needs ``value``); ``name``: keyword to pass it by
    (default: the variable's name); ``strict``: accept only arrays of exactly the input's dtype;
    ``allow_downcast``: cast values of other dtypes even if precision is lost; ``mutable``: the
    compiled function may overwrite the caller's array with intermediate results (an input
    without a default only; other inputs are never written); ``borrow`` is accepted for Theano
    compatibility.
    """

    def __init__(self, variable, name: str | None = None, value=None, update=None,
                 mutable: bool = False, strict: bool = False, allow_downcast: bool | None = None,
                 borrow: bool = False):
        graph_value(variable, "In(variable)")
        if update is not None and value is None:
            raise ValueError(f"In({variable_name(variable) or 'variable'}): an update needs a "
                             f"default value (value=...) to start from")
        self.variable = variable
        self.name = name if name is not None else variable_name(variable)
        self.value = value
        self.update = update
        self.mutable = mutable
        self.strict = strict
        self.allow_downcast = allow_downcast
        self.borrow = borrow

    @property
    def has_default(self) -> bool:
        return self.value is not None

    def __repr__(self):
        extra = f", value={self.value!r}" if self.has_default else ""
        return f"In({self.name}{extra})"


class Out:
    """An output of ``function()``; ``borrow=True`` may return the function's internal buffer
    (faster; the array may change on the next call)."""

    def __init__(self, variable, borrow: bool = False):
        graph_value(variable, "Out(variable)")
        self.variable = variable
        self.borrow = borrow

    def __repr__(self):
        return f"Out({variable_name(self.variable) or 'variable'}, borrow={self.borrow})"
