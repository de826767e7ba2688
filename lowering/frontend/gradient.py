"""The gradient API beyond ``grad``: ``Rop``, ``Lop``, ``jacobian``, ``hessian`` and the ops that
change how a gradient flows (``zero_grad``, ``disconnected_grad``, ``grad_clip``, ``grad_scale``,
``consider_constant``), as ``theano.gradient`` has them.

``Rop`` is forward mode: it pushes the eval points from ``wrt`` to the outputs through each op's
rule in ``lowering.dialects.tensor.rop.R_OP``. ``Lop`` is ``grad`` seeded with the eval points as
known gradients. ``jacobian`` and ``hessian`` build one reverse sweep for a placeholder
cotangent and batch it over the rows of an identity matrix (see ``jacobian``).

>>> import numpy as np
>>> import lowering as theano
>>> import lowering.tensor as T
>>> x, v = T.dvectors("x", "v")
>>> f = theano.function([x, v], Rop(T.sin(x), x, v))
>>> f(np.array([0.0, np.pi]), np.array([2.0, 3.0]))
array([ 2., -3.])
"""
from __future__ import annotations

import warnings

from lowering.compile.derivatives import record_derivative
from lowering.dialects.tensor import GradFilterOp, ShapeIOp
from lowering.dialects.tensor.rop import push_forward
from lowering.dialects.tensor.shape_ops import match_type
from lowering.ir.core import Block, Value, VerifyError
from lowering.ir.location import caller_location, default_location

from .batching import batch_linear, identity
from .build import apply
from .constructors import as_tensor_variable, constant
from .errors import DisconnectedInputError, GraphBuildError, GraphTypeError
from .grad import DisconnectedVariable, grad
from .graph import toposort
from .shapes import alloc, stack, zeros_like
from .variable import TensorVariable, wrap

__all__ = ["Rop", "Lop", "jacobian", "hessian", "zero_grad", "disconnected_grad", "grad_clip",
           "grad_scale", "consider_constant"]


def _as_list(x) -> list:
    return list(x) if isinstance(x, (list, tuple)) else [x]


def _format_as(like, results: list):
    """``results`` as a list, a tuple or a single value, as ``like`` was given."""
    if isinstance(like, list):
        return results
    if isinstance(like, tuple):
        return tuple(results)
    return results[0]


def _check_variables(name: str, values) -> list[TensorVariable]:
    checked = []
    for i, v in enumerate(_as_list(values)):
        if not isinstance(v, TensorVariable):
            raise GraphTypeError(f"{name}[{i}] must be a symbolic variable, got "
                                 f"{type(v).__name__} ({v!r})")
        checked.append(v)
    return checked


def _eval_points(wrt: list[TensorVariable], eval_points, fn: str) -> list[TensorVariable]:
    points = _as_list(eval_points)
    if len(points) != len(wrt):
        raise GraphBuildError(f"{fn}: eval_points has {len(points)} element(s) but there are "
                              f"{len(wrt)} variable(s) to pair them with")
    out = []
    for i, (w, p) in enumerate(zip(wrt, points)):
        try:
            p = as_tensor_variable(p)
        except (TypeError, ValueError) as exc:
            raise GraphTypeError(f"{fn}: eval_points[{i}] must be a tensor, got "
                                 f"{type(p).__name__} ({exc})") from None
        if p.ndim != w.ndim:
            raise GraphBuildError(f"{fn}: eval_points[{i}] ({p}, of type {p.type}) has "
                                  f"dimensionality {p.ndim}, but its variable {w} (of type "
                                  f"{w.type}) has {w.ndim}")
        for d, (a, b) in enumerate(zip(p.value.type.shape, w.value.type.shape)):
            if a is not None and b is not None and a != b:
                raise GraphBuildError(f"{fn}: eval_points[{i}] has {a} elements along axis {d}, "
                                      f"its variable {w} has {b}")
        out.append(p)
    return out


def Rop(f, wrt, eval_points, disconnected_outputs: str = "raise",
        return_disconnected: str = "zero"):
    """The Jacobian of ``f`` with respect to ``wrt``, times ``eval_points`` on the right:
    ``Rop[i] = sum_j (d f[i] / d wrt[j]) . eval_points[j]`` (forward mode).

    ``f`` and ``wrt`` are a variable or a list/tuple; ``eval_points`` has one tensor per ``wrt``,
    of its dimensionality. The result matches ``f`` (a list, a tuple or one variable). An output
    not depending on any ``wrt`` raises (``disconnected_outputs='raise'``), warns or is ignored,
    and is then zeros (``return_disconnected='zero'``), None (``'None'``) or a
    ``DisconnectedType`` placeholder (``'Disconnected'``).

    >>> import numpy as np
    >>> import lowering as theano
    >>> import lowering.tensor as T
    >>> W, V = T.dmatrices("W", "V")
    >>> x = T.dvector("x")
    >>> y = T.dot(x, W)
    >>> f = theano.function([V, x], Rop(y, W, V))  # y is linear in W: W is not needed
    >>> f(np.ones((2, 2)), np.ones(2))
    array([2., 2.])
    >>> f = theano.function([W, V, x], Rop(y, W, V))  # but may be given, as in Theano
    >>> f(np.zeros((2, 2)), np.ones((2, 2)), np.ones(2))
    array([2., 2.])
    """
    _check_policies(disconnected_outputs, return_disconnected, "disconnected_outputs")
    outputs = _check_variables("f", f)
    wrt_list = _check_variables("wrt", wrt)
    points = _eval_points(wrt_list, eval_points, "Rop")
    tangents: dict[Value, Value] = {}
    for w, p in zip(wrt_list, points):
        tangents[w.value] = match_type(p.value, w.value) if p.value.type != w.value.type \
            else p.value
    stop = set(tangents)
    for op in toposort([o.value for o in outputs], stop):
        operand_tangents = [tangents.get(v) for v in op.operands]
        if all(t is None for t in operand_tangents):
            continue
        try:
            results = push_forward(op, operand_tangents)
        except VerifyError as exc:
            if isinstance(exc, GraphBuildError):
                raise
            # The op without a rule (here, in a scan's step, or a function of complex numbers
            # without one) is named; the message gets the user's line.
            raise GraphBuildError(exc.message, op.location, exc.op or op) from None
        for r, t in zip(op.results, results):
            if t is not None:
                tangents[r] = t
    results = []
    for out in outputs:
        t = tangents.get(out.value)
        if t is None:
            results.append(_disconnected_output(out, disconnected_outputs, return_disconnected))
        else:
            record_derivative(t, [out.value])  # function() counts f's inputs as read
            results.append(wrap(t))
    return _format_as(f, results)


def _check_policies(disconnected: str, returned: str, name: str) -> None:
    if disconnected not in ("raise", "warn", "ignore"):
        raise ValueError(f"{name} must be 'raise', 'warn' or 'ignore', got {disconnected!r}")
    if returned.lower() not in ("zero", "none", "disconnected"):
        raise ValueError(f"return_disconnected must be 'zero', 'None' or 'Disconnected', "
                         f"got {returned!r}")


def _disconnected_output(out: TensorVariable, policy: str, returned: str):
    message = (f"Rop: the output {out} (of type {out.type}) does not depend on any variable of "
               f"wrt, or only through ops without a derivative; pass "
               f"disconnected_outputs='ignore' (or 'warn') to get a zero result")
    if policy == "raise":
        raise DisconnectedInputError(message)
    if policy == "warn":
        warnings.warn(message, stacklevel=3)
    if returned.lower() == "zero":
        return zeros_like(out)
    if returned.lower() == "none":
        return None
    return DisconnectedVariable()


def Lop(f, wrt, eval_points, consider_constant=None, disconnected_inputs: str = "raise"):
    """``eval_points`` times the Jacobian of ``f`` with respect to ``wrt``, on the left:
    ``Lop[j] = sum_i eval_points[i] . (d f[i] / d wrt[j])`` (reverse mode, ``grad`` seeded with
    ``eval_points`` as the known gradients of ``f``). The result matches ``wrt``.

    >>> import numpy as np
    >>> import lowering as theano
    >>> import lowering.tensor as T
    >>> W = T.dmatrix("W")
    >>> v, x = T.dvectors("v", "x")
    >>> f = theano.function([v, x], Lop(T.dot(x, W), W, v))  # the product is linear in W
    >>> f(np.array([1.0, 2.0]), np.array([3.0, 4.0]))
    array([[3., 6.],
           [4., 8.]])
    """
    outputs = _check_variables("f", f)
    points = _eval_points(outputs, eval_points, "Lop")
    wrt_list = _check_variables("wrt", wrt)
    known = dict(zip(outputs, points))
    found = grad(None, wrt_list, consider_constant=consider_constant,
                 disconnected_inputs=disconnected_inputs, known_grads=known)
    return _format_as(wrt, found)


# ---------------------------------------------------------------------------------------------
# Jacobian and Hessian


def jacobian(expression, wrt, consider_constant=None, disconnected_inputs: str = "raise"):
    """The Jacobian of the vector ``expression`` with respect to ``wrt`` (a variable or a list):
    for each ``w``, a tensor of shape ``(len(expression),) + w.shape`` whose row ``i`` is
    ``grad(expression[i], w)``. A scalar ``expression`` gives ``grad``.

    Theano loops over the rows with ``scan``. Here the rows are computed together, for a length
    known only at run time: the reverse sweep ``Lop(expression, w, u)`` is built once for a
    placeholder cotangent ``u``; it is linear in ``u``, so ``batching.batch_linear`` rebuilds it
    with a leading batch axis and feeds it the identity matrix, every row of which is one basis
    vector. Where the sweep goes through an op with no batching rule, an ``expression`` of
    static length falls back to one sweep per element; otherwise the error names the op (and
    ``theano.scan`` as the way to loop over the rows).

    >>> import numpy as np
    >>> import lowering as theano
    >>> import lowering.tensor as T
    >>> x = T.dvector("x")
    >>> J = jacobian(x ** 2, x)
    >>> theano.function([x], J)(np.array([1.0, 2.0]))
    array([[2., 0.],
           [0., 4.]])
    """
    expression = as_tensor_variable(expression)
    if expression.ndim > 1:
        raise GraphBuildError(f"jacobian: expression must be a vector (or a scalar), got "
                              f"{expression} of type {expression.type}; flatten it first")
    wrt_list = _check_variables("wrt", wrt)
    if expression.ndim == 0:
        return _format_as(wrt, grad(expression, wrt_list, consider_constant=consider_constant,
                                    disconnected_inputs=disconnected_inputs))
    return _format_as(wrt, _jacobian_rows(expression, wrt_list, consider_constant,
                                          disconnected_inputs))


def _jacobian_rows(expression: TensorVariable, wrt_list: list, consider_constant,
                   disconnected_inputs: str) -> list[TensorVariable]:
    cotangent = Block([expression.value.type]).args[0]
    sweeps = grad(None, wrt_list, consider_constant=consider_constant,
                  disconnected_inputs=disconnected_inputs,
                  known_grads={expression: wrap(cotangent)})
    try:
        with default_location(caller_location()):  # the batched ops point at the user's line
            length = ShapeIOp.build(expression.value, 0).result
            basis = identity(length, expression.value.type.element)
            rows = batch_linear([g.value for g in sweeps], cotangent, basis)
    except GraphBuildError:
        if expression.value.type.shape[0] is None:
            raise
        return _unrolled(expression, wrt_list, consider_constant, disconnected_inputs)
    return [wrap(r) for r in rows]


def _unrolled(expression, wrt_list, consider_constant, disconnected_inputs) -> list:
    """One reverse sweep per element of an ``expression`` of static length."""
    rows = [grad(expression[i], wrt_list, consider_constant=consider_constant,
                 disconnected_inputs=disconnected_inputs)
            for i in range(expression.value.type.shape[0])]
    return [stack([row[j] for row in rows]) if rows else
            alloc(constant(0, dtype=w.dtype), 0, *[w.shape[d] for d in range(w.ndim)])
            for j, w in enumerate(wrt_list)]


def hessian(cost, wrt, consider_constant=None, disconnected_inputs: str = "raise"):
    """The Hessian of the scalar ``cost`` with respect to each vector in ``wrt``: the
    ``jacobian`` of ``grad(cost, w)`` with respect to ``w`` (batched over the rows in the same
    way). Inputs that the gradient does not depend on (a linear cost) get zeros, as in Theano.

    >>> import numpy as np
    >>> import lowering as theano
    >>> import lowering.tensor as T
    >>> x = T.dvector("x")
    >>> H = hessian((x ** 3).sum(), x)
    >>> theano.function([x], H)(np.array([1.0, 2.0, 3.0])).diagonal()
    array([ 6., 12., 18.])
    """
    cost = as_tensor_variable(cost)
    if cost.ndim != 0:
        raise GraphBuildError(f"hessian: cost must be a scalar, got {cost} of type {cost.type}")
    wrt_list = _check_variables("wrt", wrt)
    hessians = []
    for w in wrt_list:
        if w.ndim != 1:
            raise GraphBuildError(f"hessian: each wrt must be a vector, got {w} of type {w.type}")
        g = grad(cost, w, consider_constant=consider_constant,
                 disconnected_inputs=disconnected_inputs)
        hessians.extend(_jacobian_rows(g, [w], consider_constant, "ignore"))
    return _format_as(wrt, hessians)


# ---------------------------------------------------------------------------------------------
# Ops that change the gradient


def zero_grad(x) -> TensorVariable:
    """``x`` unchanged, with a zero gradient (it still flows, as zeros, through the graph).

    >>> import lowering.tensor as T
    >>> x = T.dscalar("x")
    >>> T.grad(zero_grad(x) * x, x).eval({x: 3.0})
    array(3.)
    """
    return apply(GradFilterOp, as_tensor_variable(x), kind="zero")


def disconnected_grad(x) -> TensorVariable:
    """``x`` unchanged, with no gradient at all: ``grad`` does not go through it (a cost that
    reaches a variable only through it is disconnected from it).

    >>> import lowering.tensor as T
    >>> x = T.dscalar("x")
    >>> T.grad(disconnected_grad(x) ** 2, x)
    Traceback (most recent call last):
    ...
    lowering.frontend.errors.DisconnectedInputError: grad: the cost does not depend on x ...
    """
    return apply(GradFilterOp, as_tensor_variable(x), kind="disconnected")


def consider_constant(x) -> TensorVariable:
    """Deprecated in Theano for ``zero_grad``/``disconnected_grad``: ``x`` with a zero gradient.

    >>> import lowering.tensor as T
    >>> x = T.dscalar("x")
    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     T.grad(consider_constant(x) * x, x).eval({x: 3.0})
    array(3.)
    """
    warnings.warn("consider_constant() is deprecated, use zero_grad() or disconnected_grad() "
                  "instead.", DeprecationWarning, stacklevel=2)
    return apply(GradFilterOp, as_tensor_variable(x), kind="zero")


def grad_clip(x, lower_bound, upper_bound) -> TensorVariable:
    """``x`` unchanged, its gradient clipped elementwise to ``[lower_bound, upper_bound]``.

    >>> import lowering.tensor as T
    >>> x = T.dscalar("x")
    >>> T.grad(grad_clip(x, -1, 1) ** 2, x).eval({x: 2.0})
    array(1.)
    """
    lower, upper = _number("grad_clip", "lower_bound", lower_bound), \
        _number("grad_clip", "upper_bound", upper_bound)
    if lower > upper:
        raise GraphBuildError(f"grad_clip: lower_bound ({lower}) is above upper_bound ({upper})")
    return apply(GradFilterOp, as_tensor_variable(x), kind="clip", lower=lower, upper=upper)


def grad_scale(x, multiplier) -> TensorVariable:
    """``x`` unchanged, its gradient multiplied by ``multiplier`` (``-1`` reverses it).

    >>> import lowering.tensor as T
    >>> x = T.dscalar("x")
    >>> T.grad(grad_scale(x ** 2, -1.0), x).eval({x: 3.0})
    array(-6.)
    """
    scale = _number("grad_scale", "multiplier", multiplier)
    return apply(GradFilterOp, as_tensor_variable(x), kind="scale", lower=scale)


def _number(fn: str, name: str, value) -> float:
    if isinstance(value, TensorVariable) or isinstance(value, bool):
        raise GraphTypeError(f"{fn}: {name} must be a Python number (it is fixed when the graph "
                             f"is built), got {value!r}")
    try:
        return float(value)
    except (TypeError, ValueError):
        raise GraphTypeError(f"{fn}: {name} must be a number, got {value!r}") from None
