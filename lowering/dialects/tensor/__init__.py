"""The tensor dialect: value-semantic array ops with static shape, broadcast and dtype inference.

Each module keeps everything about its ops: definitions, ``build`` (type inference), verifiers,
folding, grad rules and interpreter rules.
"""
from .base import ConstantOp, TensorOp  # noqa: F401
