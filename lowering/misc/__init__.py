"""Theano's ``theano.misc`` names that programs written for Theano import: ``pycuda_init`` (get
the GPU ready for PyCUDA code) and ``pycuda_utils`` (GPUArray <-> CudaNdarray without copies)."""
