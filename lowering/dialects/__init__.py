"""Dialects. Importing this package registers every op, type, verifier and interpreter rule."""
from . import builtin, function_attrs, scalar, tensor, loops, gpu  # noqa: F401
