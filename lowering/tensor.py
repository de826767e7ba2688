"""The ``T`` namespace: ``import lowering.tensor as T`` gives what ``theano.tensor`` gives.

Constructors (``scalar, vector, matrix, row, col, tensor3, tensor4`` and their dtype-prefixed and
plural forms: ``fmatrix``, ``ivector``, ``lscalar``, ``dmatrices``, ...), constants, elementwise
math, reductions, shape functions, indexing updates, ``dot``, ``grad``, ``T.nnet``, and Theano's op
classes for inspecting compiled graphs (``T.Elemwise``, ...). Everything is defined in
``lowering.frontend``; this module only gathers the names.

>>> import lowering.tensor as T
>>> x = T.fmatrix("x")
>>> T.nnet.sigmoid(T.dot(x, T.fvector())).dtype
'float32'
"""
import sys as _sys

from lowering.frontend import nnet  # noqa: F401
from lowering.frontend.constructors import *  # noqa: F401,F403 - scalar, fmatrix, dvectors, ...
from lowering.frontend.constructors import (as_tensor, as_tensor_variable, constant,  # noqa: F401
                                            tensor)
from lowering.frontend.elemwise import (abs, abs_, add, and_, arccos, arccosh, arcsin,  # noqa: F401
                                        arcsinh, arctan, arctan2, arctanh, bitwise_and,
                                        bitwise_not, bitwise_or, bitwise_xor, cast, ceil, clip,
                                        cos, cosh, eq, erf, exp, exp2, expm1, floor, floor_div, ge,
                                        gt, int_div, inv, invert, isinf, isnan, le, log, log1p,
                                        log2, log10, lt, maximum, minimum, mod, mul, neg, neq, or_,
                                        pow, reciprocal, round, round_half_away_from_zero,
                                        round_half_to_even, sgn, sigmoid,
                                        sign, sin, sinh, softplus, sqr, sqrt, sub, switch, tan,
                                        tanh, true_div, trunc, where, xor)
from lowering.frontend.grad import grad  # noqa: F401
from lowering.frontend.gradient import (Lop, Rop, consider_constant,  # noqa: F401
                                        disconnected_grad, grad_clip, hessian, jacobian,
                                        zero_grad)
from lowering.frontend.verify_grad import verify_grad  # noqa: F401
from lowering.frontend.indexing import inc_subtensor, set_subtensor  # noqa: F401
from lowering.frontend.linalg import dot, outer  # noqa: F401
from lowering.frontend.nnet import log_softmax, logsoftmax, relu, softmax  # noqa: F401
from lowering.frontend.reductions import (argmax, argmin, max, mean, min, norm, prod,  # noqa: F401
                                          std, sum, var)
from lowering.frontend.shapes import (alloc, arange, concatenate, dimshuffle, fill,  # noqa: F401
                                      flatten, join, ones, ones_like, reshape, second, shape,
                                      shape_i, shape_padleft, shape_padright, squeeze, stack,
                                      transpose, zeros, zeros_like)
from lowering.frontend.theano_ops import (ARange, Alloc, AdvancedIncSubtensor,  # noqa: F401
                                          AdvancedSubtensor, Apply, Argmax, Argmin, CAReduce,
                                          CGemv, Dot, Dot22, DimShuffle, Elemwise, GpuAlloc,
                                          GpuCAReduce, GpuDimShuffle, GpuDot22, GpuElemwise,
                                          GpuFromHost, GpuGemv, HostFromGpu, IncSubtensor, Join,
                                          LogSoftmax, MakeVector, Max, Mean, Min, Op, Prod,
                                          Reshape, Shape, Shape_i, Softmax, Subtensor, Sum)
from lowering.frontend.types import TensorType  # noqa: F401
from lowering.frontend.variable import TensorConstant, TensorVariable  # noqa: F401

# ``from lowering.tensor.nnet import sigmoid`` works as it does for theano.tensor.nnet.
_sys.modules[__name__ + ".nnet"] = nnet

# ``from lowering.tensor.shared_randomstreams import RandomStreams``, as in Theano.
from lowering.frontend import random_streams as shared_randomstreams  # noqa: E402
_sys.modules[__name__ + ".shared_randomstreams"] = shared_randomstreams

# More of theano.tensor's names: index grids, padding and stacking helpers, batched products,
# x log x.
from lowering.frontend import xlogx  # noqa: F401,E402
from lowering.frontend.batched import batched_dot  # noqa: F401,E402
from lowering.frontend.grids import mgrid, ogrid  # noqa: F401,E402
from lowering.frontend.shape_extras import shape_padaxis, specify_shape, stacklists  # noqa: F401,E402

_sys.modules[__name__ + ".xlogx"] = xlogx

# ``T.nnet.conv`` and ``T.signal.pool`` as modules too (``import lowering.tensor.signal.pool``).
from lowering.frontend import signal  # noqa: E402,F401
_sys.modules[__name__ + ".nnet.conv"] = nnet.conv
_sys.modules[__name__ + ".signal"] = signal
_sys.modules[__name__ + ".signal.pool"] = signal.pool

# Complex numbers: parts, conjugate, and complex tensors from parts.
from lowering.frontend.complex_numbers import (angle, complex, complex_from_polar,  # noqa: F401,E402,A004
                                               conj, conjugate, imag, real)
