"""``pycuda.autoprimaryctx`` of the stand-in: device 0's primary context, current on the
importing thread, popped at exit (as PyCUDA's)."""
from cuda_standin import at_exit

from . import driver as cuda

cuda.init()
device = cuda.Device(0)
context = device.retain_primary_context()
context.push()


def _finish_up():
    global context
    context.pop()
    context = None


at_exit(_finish_up)
