"""The ``T`` namespace: ``import lowering.tensor as T`` gives what ``theano.tensor`` gives.

Constructors (``scalar, vector, matrix, row, col, tensor3, tensor4`` and their dtype-prefixed and
plural forms: ``fmatrix``, ``ivector``, ``lscalar``, ``dmatrices``, ...), constants, elementwise
math, reductions, shape functions, indexing updates, ``dot``, ``grad``, ``T.nnet``, and Theano's op
classes for inspecting compiled graphs (``T.Elemwise``, ...). Everything is defined in
``lowering.frontend``; this package only gathers the names. Its submodules are Theano's module
paths (``lowering.tensor.nnet.conv`` is ``theano.tensor.nnet.conv``, ...); a name or submodule
Theano has and this package lacks says so (``lowering.unsupported``).

>>> import lowering.tensor as T
>>> x = T.fmatrix("x")
>>> T.nnet.sigmoid(T.dot(x, T.fvector())).dtype
'float32'
"""
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
from lowering.frontend.variable import Constant, Variable  # noqa: F401  (isinstance checks)

# More of theano.tensor's names: index grids, padding and stacking helpers, batched products.
from lowering.frontend.batched import batched_dot  # noqa: F401,E402
from lowering.frontend.grids import mgrid, ogrid  # noqa: F401,E402
from lowering.frontend.shape_extras import shape_padaxis, specify_shape, stacklists  # noqa: F401,E402

# Theano's submodules of theano.tensor, each a module of this package.
from . import (basic, elemwise, extra_ops, nnet, shared_randomstreams, signal,  # noqa: F401,E402
               type, var, xlogx)
from lowering.unsupported import mirror_getattr  # noqa: E402

# Tensor functions of Theano's ``theano.tensor`` and ``theano.tensor.extra_ops``: sorting,
# tensordot, eye, running sums and products, repeat, one-hot, index arithmetic.
from lowering.frontend.diagonals import eye, identity_like  # noqa: E402,F401
from lowering.frontend.elemwise import sqr as square  # noqa: E402,F401
from lowering.frontend.extra_ops import (bincount, cumprod, cumsum, diff,  # noqa: E402,F401
                                         fill_diagonal, fill_diagonal_offset, ravel_multi_index,
                                         repeat, to_one_hot, unravel_index)
from lowering.frontend.sorting import argsort, sort  # noqa: E402,F401
from lowering.frontend.tensordot import tensordot  # noqa: E402,F401
from lowering.frontend.broadcasting import addbroadcast, patternbroadcast  # noqa: E402,F401
from lowering.frontend.logical_reductions import all, any  # noqa: E402,F401,A004
from lowering.frontend.tiling import tile  # noqa: E402,F401

# Complex numbers: parts, conjugate, and complex tensors from parts.
from lowering.frontend.complex_numbers import (angle, complex, complex_from_polar,  # noqa: F401,E402,A004
                                               conj, conjugate, imag, real)

__getattr__ = mirror_getattr(__name__)

# More of theano.tensor's functions: diagonals and triangles, moving elements, comparisons,
# reductions built from others, small elementwise helpers, constants known before a run, and
# Theano's dtype lists.
from lowering.frontend.triangles import diag, diagonal, tri, tril, triu  # noqa: E402,F401
from lowering.frontend.rearranging import (choose, horizontal_stack,  # noqa: E402,F401
                                           inverse_permutation, permute_row_elements, roll,
                                           split, swapaxes, take, vertical_stack)
from lowering.frontend.comparisons import allclose, isclose, largest, smallest  # noqa: E402,F401
from lowering.frontend.reduction_extras import cov, max_and_argmax, ptp  # noqa: E402,F401
from lowering.frontend.arithmetic_extras import (deg2rad, divmod, iround, power,  # noqa: E402,F401,A004
                                                 rad2deg, tensor_copy)
from lowering.frontend.unbroadcasting import unbroadcast  # noqa: E402,F401
from lowering.frontend.windows import bartlett  # noqa: E402,F401
from lowering.frontend.constant_values import (EmptyConstantError,  # noqa: E402,F401
                                               NotScalarConstantError, extract_constant,
                                               get_scalar_constant_value, get_vector_length)
from lowering.frontend.dtype_lists import *  # noqa: E402,F401,F403 - float_dtypes, int_types, ...
from lowering.frontend.special_functions import (erfc, gamma, gammaln, j0, j1, psi,  # noqa: E402,F401
                                                 tri_gamma)
from lowering.frontend.nonzero import flatnonzero, nonzero, nonzero_values  # noqa: E402,F401
from lowering.frontend.error_function_inverses import erfcinv, erfcx, erfinv  # noqa: E402,F401
