"""lowering: Theano-style array expression graphs compiled through MLIR-style dialects.

Programs written for Theano run with their imports changed::

    import lowering as theano
    import lowering.tensor as T

    x = T.vector("x")
    f = theano.function([x], T.exp(x))

>>> import numpy as np
>>> import lowering.tensor as T
>>> x = T.dvector("x")
>>> function([x], x * 2)(np.array([1.0, 2.0]))
array([2., 4.])
"""
from .llvm.requirements import check_llvmlite

check_llvmlite()  # before anything that needs llvmlite: an unsupported one fails here, clearly
from . import dialects  # noqa: F401,E402  (registers every op and interpreter rule)
from .config import change_flags, config  # noqa: F401
from .compile import Function, In, Mode, Out, function  # noqa: F401
from .frontend.shared import SharedVariable, shared  # noqa: F401
from .frontend.custom_op import Apply, Op  # noqa: F401  (ops written in Python)
from . import tensor  # noqa: F401
from .tensor import grad  # noqa: F401
from . import printing, sandbox  # noqa: F401
from . import gradient  # noqa: F401
from .printing import debugprint, pp  # noqa: F401
from . import ifelse  # noqa: F401,E402  (theano.ifelse.ifelse)
from . import scalar  # noqa: F401,E402  (theano.scalar.upcast)

__all__ = ["config", "change_flags", "function", "Function", "In", "Out", "Mode", "shared",
           "SharedVariable", "grad", "tensor", "printing", "sandbox", "pp", "debugprint", "Op",
           "Apply"]
from .frontend.scan import foldl, foldr, map, reduce, scan  # noqa: F401,E402,A004
from . import scan_module  # noqa: F401,E402
from . import sparse  # noqa: F401,E402  (theano.sparse)
__all__ += ["scan", "scan_module", "map", "reduce", "foldl", "foldr"]

# Theano's graph classes and module paths: theano.Variable, theano.gof.graph, theano.clone,
# theano.compile.function_module and sharedvalue, theano.gpuarray's probes. A Theano name or
# module missing here says so (lowering.unsupported).
from .frontend.variable import Constant, Variable  # noqa: F401,E402
from .frontend.clone import clone_replace as clone  # noqa: F401,E402
from . import gof, gpuarray  # noqa: F401,E402
from .compile import function_module, sharedvalue  # noqa: F401,E402
from .frontend.from_function_op import as_op  # noqa: F401,E402  (also fills theano.compile.ops)
from .unsupported import install_import_errors, mirror_getattr  # noqa: E402

__all__ += ["Variable", "Constant", "clone", "gof"]
__all__ += ["as_op"]
install_import_errors()
__getattr__ = mirror_getattr(__name__)
