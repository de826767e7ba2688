"""``pycuda.compiler`` of the stand-in: it compiles no CUDA C."""
from .driver import CompileError


class SourceModule:
    def __init__(self, source, *args, **kwargs):
        raise CompileError("the driver stand-in compiles no CUDA C (SourceModule runs nvcc and a "
                           "host compiler on the user's machine)")
