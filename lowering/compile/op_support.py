"""Which backend supports which op, read from the layers' rule tables.

An op reaches a backend through the layers its dialect passes on the way there, and each layer
finds what to do with it in its rule table (``lowering.ir.rules``):

- tensor ops run in the interpreter (``INTERPRETER``) and reach both compiled backends through
  ``bufferize`` (``BUFFERIZE``), which turns them into loops and scalar ops; on the GPU through
  ``DEVICE_BUFFERIZE``, which is ``BUFFERIZE`` less the ops a GPU cannot run;
- loops and scalar ops reach machine code through the CPU lowering (``CPU_LOWERING``) and, on
  the GPU, inside kernels (``GPU_KERNEL``, which falls back to the CPU's rules);
- gpu ops are run on the device by a kernel (``GPU_KERNEL``) or by the host program
  (``GPU_HOST``), whichever has the rule; they never reach the CPU backend;
- func ops (``func.call``) are lowered like loops ops;
- sparse ops take the tensor ops' path (the GPU declares them unsupported).

``BACKENDS`` says this as data: per backend, per dialect, the steps of the path, each step the
tables of which one must hold a rule. Ops that structure the IR (``CONTAINERS`` of functions
and kernels, and terminators) are walked by every layer's driver and need no rule.

>>> from lowering.dialects.tensor import ExpOp
>>> from lowering.dialects.loops import CallOp
>>> [str(support(ExpOp, backend)) for backend in BACKENDS]
['yes', 'yes', 'yes']
>>> support(CallOp, GPU)
Support(state='no', reason='external functions (BLAS, C) cannot be called from a GPU kernel')
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

# The modules that hold the layers' rules register them when imported.
import lowering.llvm.cpu.to_llvm  # noqa: F401
import lowering.passes.bufferize.bufferize  # noqa: F401
from lowering.dialects.builtin.ops import FuncOp, ModuleOp
from lowering.dialects.gpu import GpuFuncOp, GpuModuleOp
from lowering.ir.core import TERMINATOR, Operation
from lowering.ir.interpreter import INTERPRETER
from lowering.ir.rules import RuleTable
from lowering.llvm.cpu.context import CPU_LOWERING
from lowering.llvm.gpu.ops import GPU_KERNEL
from lowering.passes.bufferize.core import BUFFERIZE, DEVICE_BUFFERIZE

from .gpu.host import GPU_HOST

Path = tuple[tuple[RuleTable, ...], ...]


@dataclass(frozen=True)
class Backend:
    """A backend and the path of each dialect's ops to it (dialects it does not list never
    reach it)."""

    name: str
    paths: Mapping[str, Path]


@dataclass(frozen=True)
class Support:
    """Whether a backend handles an op: ``state`` is "yes", "no" (a layer declares it cannot;
    ``reason`` says why), "missing" (a layer on the path has no rule: a gap to fill), "n/a"
    (the op's dialect does not reach this backend) or "structure" (a driver walks it)."""

    state: str
    reason: str | None = None

    def __str__(self) -> str:
        return self.state


INTERPRETED = Backend("interpreter", {dialect: ((INTERPRETER,),)
                                      for dialect in ("tensor", "loops", "scalar", "gpu", "func",
                                                      "sparse")})
CPU = Backend("CPU", {"tensor": ((BUFFERIZE,),), "loops": ((CPU_LOWERING,),),
                      "scalar": ((CPU_LOWERING,),), "func": ((CPU_LOWERING,),),
                      "sparse": ((BUFFERIZE,),)})
GPU = Backend("GPU", {"tensor": ((DEVICE_BUFFERIZE,),), "loops": ((GPU_KERNEL,),),
                      "scalar": ((GPU_KERNEL,),), "gpu": ((GPU_KERNEL, GPU_HOST),),
                      "func": ((GPU_KERNEL,),),
                      "sparse": ((DEVICE_BUFFERIZE,),)})
BACKENDS = (INTERPRETED, CPU, GPU)

# The ops that hold functions and kernels: each layer's driver walks into them.
CONTAINERS = (ModuleOp, FuncOp, GpuModuleOp, GpuFuncOp)


def dialect_of(op_class: type[Operation]) -> str:
    """The dialect of an op class: the prefix of its name.

    >>> from lowering.dialects.builtin.ops import CallOp
    >>> dialect_of(CallOp)
    'func'
    """
    return op_class.name.split(".")[0]


def is_structure(op_class: type[Operation]) -> bool:
    """Whether every layer's driver walks ops of ``op_class`` itself (containers of functions
    and kernels; terminators, whose operands a region passes out) instead of finding a rule."""
    return issubclass(op_class, CONTAINERS) or TERMINATOR in op_class.traits


def support(op_class: type[Operation], backend: Backend) -> Support:
    """Whether ``backend`` handles ops of ``op_class``, from the tables on the op's path."""
    if is_structure(op_class):
        return Support("structure")
    path = backend.paths.get(dialect_of(op_class))
    if path is None:
        return Support("n/a")
    for step in path:
        if any(table.find(op_class) is not None for table in step):
            continue
        reasons = [r for r in (table.unsupported_reason(op_class) for table in step) if r]
        if reasons:
            return Support("no", reasons[0])
        return Support("missing", "no rule in " + " or ".join(t.layer for t in step))
    return Support("yes")


def has_gradient(op_class: type[Operation]) -> bool:
    """Whether ops of ``op_class`` know their gradient (a ``grad`` method of their own; the
    front end's ``grad`` calls it)."""
    return getattr(op_class, "grad", None) not in (None, getattr(Operation, "grad", None))


def has_pretty_form(op_class: type[Operation]) -> bool:
    """Whether ops of ``op_class`` print in a pretty form besides the generic one (a
    ``print_pretty`` hook of their own, or an assembly format)."""
    hook = getattr(op_class, "print_pretty", None)
    return (hook not in (None, getattr(Operation, "print_pretty", None))
            or getattr(op_class, "assembly_format", None) is not None)
