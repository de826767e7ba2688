"""Throughput of the vector math library's array kernels against NumPy's ufuncs, in ns per element.

Each kernel is the loop the CPU code generator emits (``out[i] = f(in[i])``), compiled at O3 for
the host; each timing is the best and the median of many calls on the same arrays (230,400
elements by default: a 480×480 image), so other load on the machine shows in the median only.

    python benchmarks/vecmath_throughput.py
    python benchmarks/vecmath_throughput.py --functions exp --formats f32 --wide-vectors
"""
from __future__ import annotations

import argparse
import ctypes
import re
import time

import llvmlite.binding as llvm
import numpy as np

from lowering.llvm import jit
from lowering.llvm.vecmath.library import MATH_FUNCTIONS
from lowering.llvm.vecmath.kernels import DTYPES, kernel_module, kernel_name

NUMPY = {"exp": np.exp, "exp2": np.exp2, "expm1": np.expm1, "log": np.log, "log2": np.log2,
         "log10": np.log10, "log1p": np.log1p, "sin": np.sin, "cos": np.cos, "tan": np.tan,
         "arcsin": np.arcsin, "arccos": np.arccos, "arctan": np.arctan, "sinh": np.sinh,
         "cosh": np.cosh, "tanh": np.tanh, "arcsinh": np.arcsinh, "arccosh": np.arccosh,
         "arctanh": np.arctanh, "sqrt": np.sqrt, "cbrt": np.cbrt}
ARGUMENTS = {"log": (0.01, 10.0), "log2": (0.01, 10.0), "log10": (0.01, 10.0),
             "log1p": (-0.9, 10.0), "sqrt": (0.0, 10.0), "arcsin": (-1.0, 1.0),
             "arccos": (-1.0, 1.0), "arccosh": (1.0, 10.0), "arctanh": (-1.0, 1.0)}


def _target_machine(wide_vectors: bool):
    if not wide_vectors:
        return jit.host_target_machine()
    # LLVM prefers 256-bit vectors on AVX-512 hosts unless told otherwise.
    target = llvm.Target.from_triple(llvm.get_process_triple())
    return target.create_target_machine(
        cpu=llvm.get_host_cpu_name(), opt=3, codemodel="jitdefault",
        features=llvm.get_host_cpu_features().flatten() + ",-prefer-256-bit")


def compile_for(pairs, wide_vectors: bool):
    """(JIT library, widest vector seen in the optimized IR) for the kernels of ``pairs``."""
    jit.host_target_machine()                       # initializes LLVM
    machine = _target_machine(wide_vectors)
    module = llvm.parse_assembly(str(kernel_module(pairs)))
    module.triple = llvm.get_process_triple()
    module.data_layout = str(machine.target_data)
    options = llvm.create_pipeline_tuning_options(speed_level=3)
    options.loop_vectorization = True
    options.slp_vectorization = True
    builder = llvm.create_pass_builder(machine, options)
    builder.getModulePassManager().run(module, builder)
    widths = [int(w) for w in re.findall(r"<(\d+) x (?:float|double)>", str(module))]
    return jit.JitLibrary(machine.emit_object(module)), max(widths, default=1)


def best_and_median(call, elements: int, repeats: int) -> tuple[float, float]:
    times = []
    for _ in range(repeats):
        start = time.perf_counter_ns()
        call()
        times.append(time.perf_counter_ns() - start)
    return min(times) / elements, float(np.median(times)) / elements


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--functions", default="exp,log,sin,tanh,sigmoid")
    parser.add_argument("--formats", default="f32,f64")
    parser.add_argument("--elements", type=int, default=230_400)
    parser.add_argument("--repeats", type=int, default=2000)
    parser.add_argument("--wide-vectors", action="store_true",
                        help="let LLVM use 512-bit vectors on AVX-512 hosts")
    args = parser.parse_args(argv)
    names, formats = args.functions.split(","), args.formats.split(",")
    unary = [n for n in names if MATH_FUNCTIONS[n].arity == 1]
    library, width = compile_for([(n, f) for n in unary for f in formats], args.wide_vectors)
    print(f"host: {llvm.get_host_cpu_name()}, widest vector in the loops: {width} lanes, "
          f"{args.elements} elements, best/median of {args.repeats} calls (ns per element)")
    print("| function | format | lowering best | lowering median | NumPy best | NumPy median |")
    print("|---|---|---|---|---|---|")
    rng = np.random.default_rng(0)
    for name in unary:
        for fmt in formats:
            lo, hi = ARGUMENTS.get(name, (-10.0, 10.0))
            x = rng.uniform(lo, hi, args.elements).astype(DTYPES[fmt])
            out = np.empty_like(x)
            signature = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64)
            kernel = signature(library.address(kernel_name(name, fmt)))
            ours = best_and_median(lambda: kernel(x.ctypes.data, out.ctypes.data, x.size),
                                   x.size, args.repeats)
            ufunc = NUMPY.get(name)
            theirs = (best_and_median(lambda: ufunc(x, out=out), x.size, args.repeats)
                      if ufunc else (float("nan"), float("nan")))
            print(f"| {name} | {fmt} | {ours[0]:.2f} | {ours[1]:.2f} | {theirs[0]:.2f} "
                  f"| {theirs[1]:.2f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
