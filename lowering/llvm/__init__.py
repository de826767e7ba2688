"""LLVM backends: loops/gpu dialects to llvmlite IR, the vector math library, the CPU JIT and NVPTX."""
