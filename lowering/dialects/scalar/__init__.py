"""The scalar dialect: the one description of elementwise semantics.

Ops on ScalarType values (``scalar.exp``, ``scalar.add``, ``scalar.select``, ``scalar.cast``, ...)
used in the bodies of fused ops and loops. ``SCALAR_OPS`` maps each function's short name to its
class; the tensor dialect's elementwise ops link to these classes.
"""
from .ops import *  # noqa: F401,F403
from . import interpret  # noqa: F401
from . import philox, position, random_draws  # noqa: F401
from .complex import *  # noqa: F401,F403
from .special_functions import *  # noqa: F401,F403

from lowering.ir.context import Dialect  # noqa: E402

# The ops this package defines, as one dialect.
DIALECT = Dialect.of_package("scalar", __name__)
