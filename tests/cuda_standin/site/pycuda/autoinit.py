"""``pycuda.autoinit`` of the stand-in: a new context on device 0, current on the importing
thread, popped at exit (as PyCUDA's)."""
from cuda_standin import at_exit

from . import driver as cuda
from .tools import make_default_context

cuda.init()
context = make_default_context()
device = context.get_device()


def _finish_up():
    global context
    context.pop()
    context = None


at_exit(_finish_up)
