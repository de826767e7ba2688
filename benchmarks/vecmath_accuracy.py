"""Measure the vector math library's error in ulps against extended-precision references.

For every function and format: random bit patterns over the whole range (NaNs, infinities,
subnormals included) and a dense, evenly spaced sweep of the main domain, each compared with the
``numpy.longdouble`` reference of ``lowering.llvm.vecmath.accuracy``.  Prints a Markdown table
(the one in docs/vecmath.md) with the worst error of each part, where it occurs, and the bound
``MATH_FUNCTIONS`` documents; exits with status 1 if a measured error exceeds its bound.

    python benchmarks/vecmath_accuracy.py --points 2000000
    python benchmarks/vecmath_accuracy.py --functions exp,sin --formats f32 --points 100000
"""
from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from lowering.llvm.vecmath.library import MATH_FUNCTIONS
from lowering.llvm.vecmath.accuracy import reference, ulp_error
from lowering.llvm.vecmath.kernels import DTYPES, compile_kernels

# The main domain of each function: where it is neither constant nor overflowing, per format.
MAIN_DOMAIN = {
    "exp": {"f32": (-103.0, 88.7), "f64": (-745.0, 709.7)},
    "exp2": {"f32": (-149.0, 127.9), "f64": (-1074.0, 1023.9)},
    "expm1": {"f32": (-20.0, 88.7), "f64": (-40.0, 709.7)},
    "log": {"f32": (0.0, 100.0), "f64": (0.0, 100.0)},
    "log2": {"f32": (0.0, 100.0), "f64": (0.0, 100.0)},
    "log10": {"f32": (0.0, 100.0), "f64": (0.0, 100.0)},
    "log1p": {"f32": (-1.0, 10.0), "f64": (-1.0, 10.0)},
    "sin": {"f32": (-100.0, 100.0), "f64": (-100.0, 100.0)},
    "cos": {"f32": (-100.0, 100.0), "f64": (-100.0, 100.0)},
    "tan": {"f32": (-100.0, 100.0), "f64": (-100.0, 100.0)},
    "arcsin": {"f32": (-1.0, 1.0), "f64": (-1.0, 1.0)},
    "arccos": {"f32": (-1.0, 1.0), "f64": (-1.0, 1.0)},
    "arctan": {"f32": (-10.0, 10.0), "f64": (-10.0, 10.0)},
    "arctan2": {"f32": (-10.0, 10.0), "f64": (-10.0, 10.0)},
    "sinh": {"f32": (-89.4, 89.4), "f64": (-710.4, 710.4)},
    "cosh": {"f32": (-89.4, 89.4), "f64": (-710.4, 710.4)},
    "tanh": {"f32": (-10.0, 10.0), "f64": (-20.0, 20.0)},
    "arcsinh": {"f32": (-100.0, 100.0), "f64": (-100.0, 100.0)},
    "arccosh": {"f32": (1.0, 100.0), "f64": (1.0, 100.0)},
    "arctanh": {"f32": (-1.0, 1.0), "f64": (-1.0, 1.0)},
    "sigmoid": {"f32": (-104.0, 20.0), "f64": (-745.0, 40.0)},
    "softplus": {"f32": (-104.0, 20.0), "f64": (-745.0, 40.0)},
    "pow": {"f32": (0.0, 10.0), "f64": (0.0, 10.0)},
    "sqrt": {"f32": (0.0, 100.0), "f64": (0.0, 100.0)},
    "erf": {"f32": (-4.0, 4.0), "f64": (-6.0, 6.0)},
    "cbrt": {"f32": (-100.0, 100.0), "f64": (-100.0, 100.0)},
}
POW_EXPONENTS = (-30.0, 30.0)


def random_bits(rng: np.random.Generator, fmt: str, n: int) -> np.ndarray:
    """``n`` values with uniformly random bit patterns."""
    if fmt == "f32":
        return rng.integers(0, 2 ** 32, n, dtype=np.uint64).astype(np.uint32).view(np.float32)
    return rng.integers(0, 2 ** 64, n, dtype=np.uint64, endpoint=False).view(np.float64)


def dense(fmt: str, lo: float, hi: float, n: int) -> np.ndarray:
    return np.linspace(lo, hi, n, dtype=np.float64).astype(DTYPES[fmt])


def measure(kernel, name: str, fmt: str, args: list[np.ndarray], chunk: int = 1 << 20):
    """(worst error, the arguments where it occurs) over ``args``, evaluated in chunks."""
    worst, where = -1.0, None
    for start in range(0, args[0].size, chunk):
        part = [a[start:start + chunk] for a in args]
        err = ulp_error(kernel(*part), reference(name, *part), fmt)
        i = int(np.argmax(err))
        if err[i] > worst:
            worst, where = float(err[i]), tuple(a[i].item() for a in part)
    return worst, where


def run(names: list[str], formats: list[str], points: int, seed: int) -> list[dict]:
    kernels = compile_kernels([(n, f) for n in names for f in formats])
    rng = np.random.default_rng(seed)
    rows = []
    for name in names:
        arity = MATH_FUNCTIONS[name].arity
        for fmt in formats:
            started = time.perf_counter()
            kernel = kernels[name, fmt]
            bits = [random_bits(rng, fmt, points) for _ in range(arity)]
            lo, hi = MAIN_DOMAIN[name][fmt]
            if arity == 1:
                sweep = [dense(fmt, lo, hi, points)]
            else:
                side = int(np.sqrt(points))
                first = dense(fmt, lo, hi, side)
                second = dense(fmt, *(POW_EXPONENTS if name == "pow" else (lo, hi)), side)
                grid = np.meshgrid(first, second, indexing="ij")
                sweep = [g.ravel() for g in grid]
            rows.append({
                "name": name, "fmt": fmt, "bound": MATH_FUNCTIONS[name].max_ulp[fmt],
                "bits": measure(kernel, name, fmt, bits),
                "dense": measure(kernel, name, fmt, sweep), "domain": (lo, hi),
                "seconds": time.perf_counter() - started,
            })
            print(_row(rows[-1]), file=sys.stderr, flush=True)
    return rows


def _row(r: dict) -> str:
    (bits_err, bits_at), (dense_err, dense_at) = r["bits"], r["dense"]
    lo, hi = r["domain"]
    at = ", ".join(f"{v:.9g}" for v in (dense_at if dense_err >= bits_err else bits_at))
    return (f"| {r['name']} | {r['fmt']} | {bits_err:.3f} | {dense_err:.3f} "
            f"| [{lo:g}, {hi:g}] | {at} | {r['bound']:g} |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--functions", default=",".join(MATH_FUNCTIONS),
                        help="comma-separated names (default: all)")
    parser.add_argument("--formats", default="f32,f64")
    parser.add_argument("--points", type=int, default=1_000_000,
                        help="points per part (random bits, dense sweep) and format")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    names = args.functions.split(",")
    unknown = [n for n in names if n not in MATH_FUNCTIONS]
    if unknown:
        parser.error(f"unknown function(s): {', '.join(unknown)}")
    rows = run(names, args.formats.split(","), args.points, args.seed)
    print("| function | format | max ulp, random bits | max ulp, dense sweep | sweep domain "
          "| worst argument | documented bound |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(_row(r))
    over = [r for r in rows if max(r["bits"][0], r["dense"][0]) > r["bound"]]
    for r in over:
        print(f"{r['name']} {r['fmt']}: measured error above the documented bound", file=sys.stderr)
    return 1 if over else 0


if __name__ == "__main__":
    raise SystemExit(main())
