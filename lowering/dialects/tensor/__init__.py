"""The tensor dialect: value-semantic array ops with static shape, broadcast and dtype inference.

Each module keeps everything about its ops: definitions, ``build`` (type inference), verifiers,
folding, grad rules and interpreter rules.
"""
from .base import ConstantOp, TensorOp  # noqa: F401
from .shape_ops import (AllocOp, ArangeOp, ConcatenateOp, DimShuffleOp, FillOp, MakeVectorOp,  # noqa: F401
                        ReshapeOp, ShapeIOp, ShapeOp)
from .indexing import (AdvancedIncSubtensorOp, AdvancedSetSubtensorOp,  # noqa: F401
                       AdvancedSubtensorOp, IncSubtensorOp, SetSubtensorOp, SubtensorOp)
from .linalg import DotOp  # noqa: F401
from .nnet import LogSoftmaxOp, SoftmaxOp  # noqa: F401
from .elementwise import *  # noqa: F401,F403
from .elementwise import ELEMENTWISE_OPS, ElementwiseOp, elementwise  # noqa: F401
from .reduction import (ArgMaxOp, ArgMinOp, MaxOp, MeanOp, MinOp, ProdOp, REDUCTION_OPS,  # noqa: F401
                        ReductionOp, SumOp)
from . import gradutil  # noqa: F401
from .blas import GemmOp, GemvOp  # noqa: F401
from .fused import FusedOp, Reduction  # noqa: F401
from .custom import CustomOp  # noqa: F401
from .branches import IfOp, YieldOp  # noqa: F401
from .random import RandomOp  # noqa: F401
from .checks import CheckOp  # noqa: F401
from .specify_shape import SpecifyShapeOp  # noqa: F401
from .conv import Conv2dGradFiltersOp, Conv2dGradInputsOp, Conv2dOp  # noqa: F401
from .pool import Pool2dGradOp, Pool2dOp  # noqa: F401
from . import canonical  # noqa: F401  (attaches the canonicalization patterns to the op classes)
from .scan import ScanOp, ScanYieldOp  # noqa: F401
from . import scan_rewrites  # noqa: F401  (loop-invariant code motion, last-step outputs)
from . import scan_grad  # noqa: F401  (backpropagation through time)
from .grad_filter import GradFilterOp  # noqa: F401
from .rop import R_OP  # noqa: F401
from . import pool_rop  # noqa: F401,E402  (forward mode through pool2d)
from .cumulative import CumProdOp, CumSumOp, CumulativeOp  # noqa: F401
from .sorting import ArgSortOp  # noqa: F401
from .complex import (AngleOp, COMPLEX_ELEMENTWISE_OPS, ComplexFromPolarOp,  # noqa: F401
                      ComplexOp, ConjOp, ImagOp, RealOp)
from .special_functions import (ErfcOp, GammaLnOp, GammaOp, J0Op, J1Op,  # noqa: F401
                                SPECIAL_ELEMENTWISE_OPS)

from lowering.ir.context import Dialect  # noqa: E402

# The ops this package defines, as one dialect.
DIALECT = Dialect.of_package("tensor", __name__)
