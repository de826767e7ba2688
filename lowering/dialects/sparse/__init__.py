"""The sparse dialect: ops on sparse matrices, whose tensor types carry a storage encoding
(``tensor<?x?xf64, #csr>``), as MLIR's sparse_tensor dialect. See ``ops`` for the ops and
``interpret`` for how they run on ``scipy.sparse`` matrices in the interpreter."""
from .ops import (AddDenseOp, AssembleOp, DisassembleOp, FromDenseOp, MatmulOp,  # noqa: F401
                  MulDenseOp, SampleOp, SparseOp, SumOp, ToDenseOp, TransposeOp)
from .ops import on_structure, same_structure, structure_root  # noqa: F401
from .combine import (AddSparseOp, ConcatOp, ConvertOp, MulSparseOp, SpmmOp,  # noqa: F401
                      add_sparse, in_encoding, sparse_product, sum_sparse)
from . import interpret  # noqa: F401
from . import rop  # noqa: F401  (forward-mode rules)

from lowering.ir.context import Dialect  # noqa: E402

# The ops this package defines, as one dialect.
DIALECT = Dialect.of_package("sparse", __name__)
