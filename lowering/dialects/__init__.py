"""Dialects. Importing this package registers every op, type, verifier and interpreter rule."""
from . import builtin, scalar, tensor, loops, gpu  # noqa: F401
