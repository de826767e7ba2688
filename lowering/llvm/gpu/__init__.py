"""The NVPTX target: gpu-dialect kernels to LLVM IR and PTX, and the CUDA driver.

``to_ptx.py`` translates a module's kernels; ``kernels``, ``ops`` and ``kernel_math``
lower kernel bodies (on top of the CPU target's op rules); ``target`` picks the GPU
architecture and LLVM's target machine; ``ptxas`` checks PTX with NVIDIA's assembler;
``cuda_runtime`` finds PyCUDA and the driver, or says what is missing.
"""
