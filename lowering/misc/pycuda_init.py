"""``theano.misc.pycuda_init``: importing it gets the GPU ready for the program's PyCUDA code.

When PyCUDA, a CUDA driver and a device are present, the default GPU context (the one compiled
functions use, chosen by the ``device`` flag) is made current on the importing thread and popped
at exit (as ``pycuda.autoprimaryctx`` does), so that ``SourceModule`` kernels and
``pycuda.gpuarray`` arrays of the program share memory with compiled functions. As in
Theano, importing it without a GPU is not an error: ``pycuda_available`` says whether it worked.

>>> isinstance(pycuda_available, bool)
True
"""
from lowering.llvm.gpu.cuda_runtime import cuda_available, get_context, make_current

pycuda_available = cuda_available()
if pycuda_available:
    make_current(get_context(None))
