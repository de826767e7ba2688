"""``theano.gradient``: differentiation of graphs, by the names Theano gives them.

``grad``, ``Rop``/``Lop`` (Jacobian times a vector, forward and reverse mode), ``jacobian``,
``hessian``, the ops that change how a gradient flows (``zero_grad``, ``disconnected_grad``,
``grad_clip``, ``grad_scale``, ``consider_constant``) and ``verify_grad``. Everything is defined
in ``lowering.frontend``; this module only gathers the names.

>>> import numpy as np
>>> import lowering as theano
>>> import lowering.tensor as T
>>> x = T.dscalar("x")
>>> theano.gradient.grad(theano.gradient.grad_clip(x, -1, 1) ** 2, x).eval({x: 2.0})
array(1.)
"""
from lowering.frontend.errors import DisconnectedInputError  # noqa: F401
from lowering.frontend.grad import (DisconnectedType, DisconnectedVariable,  # noqa: F401
                                    disconnected_type, grad)
from lowering.frontend.gradient import (Lop, Rop, consider_constant,  # noqa: F401
                                        disconnected_grad, grad_clip, grad_scale, hessian,
                                        jacobian, zero_grad)
from lowering.frontend.verify_grad import GradientError, verify_grad  # noqa: F401
