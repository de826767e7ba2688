"""The loops dialect: buffers, loop nests and calls, the target of bufferization.

Functions stay ``func.func``, with buffer arguments for inputs and outputs alike (destination
passing). Scalar arithmetic, index arithmetic included, uses the scalar dialect on ``index``.
Each module keeps its ops' definitions, builders, verifiers and interpreter rules:

- ``types``: ``BufferType`` (``!loops.buffer<?x4xf32, strides=[?, 1], offset=?>``) and its parser;
- ``memory``: ``alloc``, ``dealloc``, ``dim``, ``stride``, ``load``, ``store``, ``copy``, ``fill``;
- ``views``: ``subview``, ``reshape_view``, ``transpose_view``, ``broadcast_view``;
- ``control``: ``for``, ``parallel``, ``if``, ``yield``;
- ``calls`` and ``externals``: ``call`` and the external symbols it knows (BLAS);
- ``checks``, ``syntax``, ``runtime``: what the verifiers, the pretty forms and the interpreter
  rules share.

The text format of the type and of every op is in docs/loops.md.
"""
from .types import (KEYWORD, MEMORY_SPACES, BufferType, contiguous_strides,  # noqa: F401
                    parse_buffer_type)
from .checks import DYNAMIC  # noqa: F401
from .memory import (AllocOp, CopyOp, DeallocOp, DimOp, FillOp, LoadOp, StoreOp,  # noqa: F401
                     StrideOp)
from .views import (BroadcastViewOp, ReshapeViewOp, SubviewOp, TransposeViewOp,  # noqa: F401
                    broadcast_type, subview_type, transpose_type)
from .control import ForOp, IfOp, ParallelOp, WhileOp, YieldOp  # noqa: F401
from .externals import (EXTERNAL_FUNCTIONS, BufferParam, ExternalFunction,  # noqa: F401
                        register_external)
from .calls import CallOp  # noqa: F401
from .runtime import BufferIndexError  # noqa: F401
from .asserts import AssertOp, RuntimeCheckError, RuntimeIndexError  # noqa: F401
from .constants import ConstantOp  # noqa: F401
from .python_calls import PythonCallOp, PythonResultsOp  # noqa: F401

from lowering.ir.context import Dialect  # noqa: E402

# The ops this package defines, as one dialect.
DIALECT = Dialect.of_package("loops", __name__)
