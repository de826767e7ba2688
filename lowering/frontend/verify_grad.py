"""``verify_grad``: a symbolic gradient checked against finite differences, as Theano's.

The function's output is projected on a random array ``u`` (entries in ``[0.5, 1.5)``) to the
scalar ``sum(u * fun(*inputs))``; its gradient from ``grad`` is compared with central differences
of that scalar, element by element. A difference above both tolerances raises ``GradientError``
(also reachable as ``verify_grad.E_grad``), naming the input, the position and both values.

>>> import numpy as np
>>> import lowering.tensor as T
>>> verify_grad(T.tanh, [np.array([[2.0, 3, 4], [-1, 3.3, 9.9]])], rng=np.random.RandomState(0))
"""
from __future__ import annotations

import numpy as np

from .constructors import tensor
from .grad import grad
from .reductions import sum as tensor_sum

# Step sizes and tolerances by dtype, Theano's.
_EPS = {"float16": 1e-1, "float32": 1e-2, "float64": 1e-7}
_TOLERANCE = {"float16": 5e-2, "float32": 1e-2, "float64": 1e-4}


class GradientError(Exception):
    """The symbolic and numeric gradients differ beyond the tolerances."""

    def __init__(self, arg, err_pos, shape, val1, val2, abs_err, rel_err, abs_tol, rel_tol):
        super().__init__()
        self.arg, self.err_pos, self.shape = arg, err_pos, shape
        self.val1, self.val2 = val1, val2
        self.abs_err, self.rel_err, self.abs_tol, self.rel_tol = abs_err, rel_err, abs_tol, rel_tol

    def __str__(self) -> str:
        extra = ", ".join(str(a) for a in self.args)
        return (f"GradientError: numeric gradient and analytic gradient exceed tolerance:\n"
                f"        At position {self.err_pos} of argument {self.arg} with shape "
                f"{self.shape},\n"
                f"            val1 = {self.val1:f}      ,  val2 = {self.val2:f}\n"
                f"            abs. error = {self.abs_err:f},  abs. tolerance = {self.abs_tol:f}\n"
                f"            rel. error = {self.rel_err:f},  rel. tolerance = {self.rel_tol:f}"
                + (f"\nException args: {extra}" if extra else ""))


def verify_grad(fun, pt, n_tests: int = 2, rng=None, eps=None, out_type=None, abs_tol=None,
                rel_tol=None, mode=None, cast_to_output_type: bool = False,
                no_debug_ref: bool = True) -> None:
    """Check ``grad`` of ``fun`` at the points ``pt`` (a list of float arrays, one per input of
    ``fun``) against finite differences, ``n_tests`` times with fresh random projections from
    ``rng`` (a ``numpy.random.RandomState``, required). ``eps`` is the step (by dtype when None),
    ``abs_tol``/``rel_tol`` the tolerances (by dtype when None); an element fails when it exceeds
    both. ``mode`` compiles the functions; ``cast_to_output_type`` makes the projection float32
    for a float32 output. ``out_type`` (complex outputs) and ``no_debug_ref`` (DebugMode) are
    accepted as Theano's; complex outputs are refused. Raises ``verify_grad.E_grad``.

    >>> import numpy as np
    >>> from lowering.frontend.gradient import grad_scale
    >>> wrong = lambda x: grad_scale(x ** 2, 2.0)  # the value of x ** 2, twice its gradient
    >>> try:
    ...     verify_grad(wrong, [np.array([1.0, 2.0])], rng=np.random.RandomState(0))
    ... except verify_grad.E_grad as error:
    ...     print("mismatch in argument", error.arg)
    mismatch in argument 0
    """
    from lowering.compile import function
    from lowering.frontend.shared import shared

    if not isinstance(pt, (list, tuple)):
        raise TypeError(f"verify_grad: pt must be a list of arrays (one per input of fun), "
                        f"got {type(pt).__name__}")
    if rng is None:
        raise TypeError("verify_grad: rng must be a numpy.random.RandomState (it draws the "
                        "random projection of the output)")
    if out_type is not None and str(out_type).startswith("complex"):
        raise NotImplementedError("verify_grad: complex outputs (out_type) are not supported")
    points = [np.array(p) for p in pt]
    for i, p in enumerate(points):
        if p.dtype.name not in _TOLERANCE:
            raise TypeError(f"verify_grad can work only with floating point inputs, but input "
                            f"{i} has dtype \"{p.dtype}\".")
    abs_tol = max(_TOLERANCE[p.dtype.name] for p in points) if abs_tol is None else abs_tol
    rel_tol = max(_TOLERANCE[p.dtype.name] for p in points) if rel_tol is None else rel_tol

    inputs = [tensor(p.dtype.name, shape=tuple(1 if s == 1 else None for s in p.shape),
                     name=f"input {i}") for i, p in enumerate(points)]
    output = fun(*inputs)
    if isinstance(output, (list, tuple)):
        raise NotImplementedError("verify_grad: fun must return one variable (multiple outputs "
                                  "are not supported)")
    value = np.asarray(function(inputs, output, mode=mode)(*[p.copy() for p in points]))

    def projection():
        plain = rng.rand(*value.shape) + 0.5
        if cast_to_output_type and output.dtype == "float32":
            return plain.astype("float32")
        return plain

    weights = shared(projection(), name="random_projection")
    cost = tensor_sum(weights * output)
    cost_fn = function(inputs, cost, mode=mode)
    grad_fn = function(inputs, grad(cost, inputs, disconnected_inputs="ignore"), mode=mode)
    for test in range(n_tests):
        analytic = [np.asarray(g) for g in grad_fn(*[p.copy() for p in points])]
        numeric = _numeric_grad(cost_fn, points, eps)
        _compare(analytic, numeric, abs_tol, rel_tol, points, eps)
        if test < n_tests - 1:
            weights.set_value(projection())


def _numeric_grad(cost_fn, points: list, eps) -> list:
    """Central differences of ``cost_fn`` at ``points``, one element at a time, in the widest
    float type among them."""
    dtype = max((p.dtype for p in points), key=lambda d: d.itemsize)
    step = _EPS[dtype.name] if eps is None else eps
    grads = []
    for i, p in enumerate(points):
        g = np.zeros(p.shape, dtype=dtype)
        flat = g.reshape(-1)
        for j in range(p.size):
            moved = [q.copy() for q in points]
            moved[i].reshape(-1)[j] += step
            up = float(cost_fn(*moved))
            moved[i].reshape(-1)[j] -= 2 * step
            down = float(cost_fn(*moved))
            flat[j] = (up - down) / (2 * step)
        grads.append(g)
    return grads


def _compare(analytic, numeric, abs_tol, rel_tol, points, eps) -> None:
    for arg, (a, n) in enumerate(zip(analytic, numeric)):
        if a.shape != n.shape:
            raise ValueError(f"verify_grad: the gradient of input {arg} has shape {a.shape}, "
                             f"the input {n.shape}")
        abs_err = np.abs(a - n).reshape(-1)
        rel_err = (abs_err / np.maximum(np.abs(a) + np.abs(n), 1e-8).reshape(-1))
        failing = (abs_err > abs_tol) & (rel_err > rel_tol)
        if failing.any():
            pos = int(np.argmax(np.where(failing, abs_err, -1)))
            error = GradientError(arg, pos, a.shape, a.reshape(-1)[pos], n.reshape(-1)[pos],
                                  abs_err[pos], rel_err[pos], abs_tol, rel_tol)
            error.args = ("\nThe error happened with the following inputs:", points,
                          "\nThe value of eps is:", eps)
            raise error


verify_grad.E_grad = GradientError
