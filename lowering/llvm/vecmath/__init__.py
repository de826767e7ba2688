"""The vector math library: exp, log, sin, tanh, ... as branch-free LLVM IR that loops
vectorize.

``library.py`` defines the functions in a module; ``emit.py`` is the IR-building
toolkit; one module per family (``exp``, ``log``, ``trig``, ``inverse_trig``,
``inverse_hyperbolic``, ``special``) with their coefficients (``coefficients``,
``remez``); ``kernels`` and ``accuracy`` let tests and benchmarks call and measure
them. It knows no dialect: both the CPU and the GPU targets call it.
"""
