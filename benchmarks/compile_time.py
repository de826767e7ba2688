"""Compile time of seed 002's logistic regression, each figure from a fresh process.

``cold``: a new process with an empty disk cache; ``warm``: a second process with the cache the
first one filled. ``lowering``'s cache directory is set with both ``LOWERING_CACHE_DIR`` and
the ``cache_dir`` flag, PyTensor's (default mode and C backend) with ``base_compiledir``. Numba
and JAX keep no disk cache by default, so they have a cold figure only.

What is timed, after the imports and after the graph or Python function is built: from the call
that compiles (``function()``; ``jax.jit(...)``; the Numba function's definition) until the first
training step has returned, so compilers that compile on first call are measured the same way as
those that compile in ``function()``.

This file is also the child's script: ``python -m benchmarks.compile_time LIBRARY`` prints one
JSON line ``{"seconds": ..., "function_seconds": ..., "first_call_seconds": ..., "note": ...}``.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time

from benchmarks.harness import Measurement

LIBRARIES = ("lowering", "pytensor", "pytensor_c", "jax", "numba")
DISK_CACHED = ("lowering", "pytensor", "pytensor_c")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TITLES = {
    "compile-cold": "compile the logistic regression, cold (new process, empty disk cache)",
    "compile-warm": "compile the logistic regression, warm (new process, disk cache filled)",
}
PARAMS = {"n": 400, "features": 784, "repeats": 2}
QUICK = {"repeats": 1}


# -------------------------------------------------------------------------------------------
# The child


def _probe_theano(library: str, n: int, features: int) -> dict:
    import benchmarks.peers  # noqa: F401  (the note's helpers: imported before the timing)
    from benchmarks.workloads import libs
    from benchmarks.workloads.logreg import build_seed_program, seed_data
    if library == "lowering":
        theano, _ = libs.lowering_modules()
        compile_function = libs.lowering_function
    else:
        theano, _ = libs.pytensor_modules()
        compile_function = libs.pytensor_function
    (x, y), w0 = seed_data(n, features)
    program = build_seed_program(theano, theano.tensor, w0)
    backend = libs.pytensor_c_backend() if library == "pytensor_c" else contextlib.nullcontext()
    start = time.perf_counter()
    with backend:
        train, note = compile_function(program["inputs"], program["outputs"],
                                       updates=program["updates"], name="train")
    built = time.perf_counter()
    train(x, y)
    done = time.perf_counter()
    return {"seconds": done - start, "function_seconds": built - start,
            "first_call_seconds": done - built, "note": note}


def _probe_jax(n: int, features: int) -> dict:
    import jax
    from benchmarks.workloads.logreg import jax_step, seed_data
    (x, y), w0 = seed_data(n, features)
    jax.devices()  # backend start-up is not compilation
    start = time.perf_counter()
    step, jnp = jax_step()
    args = (jnp.asarray(w0), jnp.asarray(0.0, dtype=jnp.float32), jnp.asarray(x), jnp.asarray(y))
    built = time.perf_counter()
    jax.block_until_ready(step(*args))
    done = time.perf_counter()
    return {"seconds": done - start, "function_seconds": built - start,
            "first_call_seconds": done - built,
            "note": "jax.jit, traced and compiled on first call"}


def _probe_numba(n: int, features: int) -> dict:
    import numba  # noqa: F401  (imported before the timing, as the other libraries are)
    import numpy as np
    from benchmarks.workloads.logreg import numba_step, seed_data
    (x, y), w0 = seed_data(n, features)
    start = time.perf_counter()
    step = numba_step()
    built = time.perf_counter()
    step(x, y, w0, np.float32(0))
    done = time.perf_counter()
    return {"seconds": done - start, "function_seconds": built - start,
            "first_call_seconds": done - built, "note": "numba.njit, compiled on first call"}


def probe(library: str, n: int, features: int) -> dict:
    """Compile the logistic regression with ``library`` in this process and time it."""
    if library in DISK_CACHED:
        return _probe_theano(library, n, features)
    if library == "jax":
        return _probe_jax(n, features)
    if library == "numba":
        return _probe_numba(n, features)
    raise ValueError(f"no compile-time probe for {library!r}; probes: {', '.join(LIBRARIES)}")


# -------------------------------------------------------------------------------------------
# The parent


def _append_flags(env: dict, variable: str, flags: str) -> None:
    """Add ``flags`` after what ``variable`` already holds (later flags win)."""
    env[variable] = ",".join(filter(None, [env.get(variable, ""), flags]))


def probe_environment(library: str, cache_dir: str) -> dict:
    """The environment of a child whose disk cache (if its library has one) is ``cache_dir``.

    >>> env = probe_environment("lowering", "/tmp/c")
    >>> env["LOWERING_CACHE_DIR"], env["LOWERING_FLAGS"].endswith("cache=True,cache_dir=/tmp/c")
    ('/tmp/c', True)
    """
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [ROOT, env.get("PYTHONPATH", "")]))
    if library == "lowering":
        env["LOWERING_CACHE_DIR"] = cache_dir
        _append_flags(env, "LOWERING_FLAGS", f"cache=True,cache_dir={cache_dir}")
    elif library in ("pytensor", "pytensor_c"):
        _append_flags(env, "PYTENSOR_FLAGS", f"base_compiledir={cache_dir}")
    return env


def run_probe(library: str, cache_dir: str, params: dict, timeout: float = 600) -> dict:
    """Run ``probe`` in a new process; its JSON result, or ``{"error": ...}``."""
    command = [sys.executable, "-m", "benchmarks.compile_time", library,
               "--n", str(params["n"]), "--features", str(params["features"])]
    try:
        done = subprocess.run(command, cwd=ROOT, env=probe_environment(library, cache_dir),
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"did not finish in {timeout:.0f} s"}
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        return {"error": f"exit status {done.returncode}: " + " | ".join(tail)}
    return json.loads(lines[-1])


def _measurement(workload: str, library: str, runs: list[dict]) -> Measurement:
    good = [r for r in runs if "error" not in r]
    if not good:
        return Measurement(workload, library, error=runs[0]["error"])
    best = min(good, key=lambda r: r["seconds"])
    split = (f"function() {best['function_seconds']:.3g} s + first call "
             f"{best['first_call_seconds']:.3g} s")
    return Measurement(workload, library, seconds=best["seconds"], calls=1,
                       note=f"{best['note']}; {split}", extra=best)


def measure_compile(libraries, params: dict, progress=print) -> list[Measurement]:
    """Cold (and, for libraries with a disk cache, warm) compile times, best of
    ``params["repeats"]`` pairs of processes, each pair with its own new cache directory."""
    out = []
    for library in libraries:
        cold, warm = [], []
        for _ in range(params["repeats"]):
            with tempfile.TemporaryDirectory(prefix="bench-cache-") as tmp:
                cache_dir = os.path.join(tmp, "cache")
                cold.append(run_probe(library, cache_dir, params))
                if library in DISK_CACHED:
                    warm.append(run_probe(library, cache_dir, params))
        out.append(_measurement("compile-cold", library, cold))
        if warm:
            out.append(_measurement("compile-warm", library, warm))
        for m in out[-2 if warm else -1:]:
            outcome = f"{m.seconds:.3f} s  ({m.note})" if m.error is None else f"FAILED {m.error}"
            progress(f"  {m.workload:13} {library:9} {outcome}")
    return out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("library", choices=LIBRARIES)
    parser.add_argument("--n", type=int, default=PARAMS["n"])
    parser.add_argument("--features", type=int, default=PARAMS["features"])
    args = parser.parse_args(argv)
    print(json.dumps(probe(args.library, args.n, args.features)))


if __name__ == "__main__":
    main()
