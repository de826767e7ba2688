"""The optimized graph from the disk cache: a function built again (in this process or a later
one) skips the graph optimizations and gets the same optimized IR; other optimizations, a
corrupt entry or a mode that watches the passes run them."""
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import lowering as theano
import lowering.tensor as T
from lowering.compile import graph_cache
from lowering.compile.cache import DiskCache
from lowering.compile.pipeline import get_mode
from lowering.config import config


@pytest.fixture
def cache_dir(tmp_path):
    config.cache = True
    config.cache_dir = str(tmp_path / "cache")
    return config.cache_dir


@pytest.fixture
def optimize_calls(monkeypatch):
    calls = []
    real = graph_cache.optimize

    def counting(module, pipeline, instrumentations=()):
        calls.append(pipeline)
        return real(module, pipeline, instrumentations)
    monkeypatch.setattr(graph_cache, "optimize", counting)
    return calls


def _build(mode=None):
    x = T.fvector("x")
    return theano.function([x], T.exp(-x) * 2 + T.exp(-x), mode=mode)


X = np.linspace(-2, 2, 7, dtype=np.float32)


def test_the_same_graph_again_skips_the_optimizations(cache_dir, optimize_calls):
    first = _build()
    second = _build()
    assert len(optimize_calls) == 1
    assert second.ir("optimized", locations=True) == first.ir("optimized", locations=True)
    assert "tensor.fused" in second.ir("optimized")
    assert (second.pipeline, second.missing_optimizations) == \
        (first.pipeline, first.missing_optimizations)
    np.testing.assert_array_equal(second(X), first(X))
    np.testing.assert_allclose(second(X), np.exp(-X) * 3, rtol=1e-6)


def test_other_optimizations_are_another_entry(cache_dir, optimize_calls):
    fused = _build()
    config.optimizer_excluding = "fuse"
    unfused = _build()
    assert len(optimize_calls) == 2 and "fuse" not in optimize_calls[1]
    assert "tensor.fused" in fused.ir("optimized")
    assert "tensor.fused" not in unfused.ir("optimized")
    np.testing.assert_allclose(unfused(X), fused(X), rtol=1e-6)


def test_a_corrupt_entry_is_optimized_again(cache_dir, optimize_calls):
    first = _build()
    key = graph_cache.graph_key(first.ir_module("tensor"), get_mode(None))
    path = DiskCache(cache_dir)._path(key)
    assert os.path.exists(path)
    with open(path, "r+b") as fh:
        fh.seek(40)
        fh.write(b"garbage")
    again = _build()
    assert len(optimize_calls) == 2
    np.testing.assert_array_equal(again(X), first(X))
    _build()  # the rebuilt entry is good again
    assert len(optimize_calls) == 2


def test_a_mode_that_watches_the_passes_runs_them_every_time(cache_dir, optimize_calls):
    _build("DebugMode")
    _build("DebugMode")
    assert len(optimize_calls) == 2


def test_without_the_cache_the_passes_run_every_time(cache_dir, optimize_calls):
    config.cache = False
    _build()
    _build()
    assert len(optimize_calls) == 2


SCRIPT = textwrap.dedent("""
    import json, sys
    import numpy as np
    import lowering as theano
    import lowering.tensor as T
    x = T.fvector("x")
    f = theano.function([x], T.tanh(x) * 3 + T.exp(x))
    out = f(np.linspace(-1, 1, 5, dtype=np.float32))
    print(json.dumps({"passes_imported": "lowering.passes.fuse" in sys.modules,
                      "optimized": f.ir("optimized", locations=True), "out": out.tolist()}))
""")


def test_a_later_process_neither_optimizes_nor_imports_the_passes(tmp_path):
    script = tmp_path / "program.py"
    script.write_text(SCRIPT)
    env = {k: v for k, v in os.environ.items() if k not in ("LOWERING_FLAGS", "THEANO_FLAGS")}
    env["LOWERING_CACHE_DIR"] = str(tmp_path / "cache")
    runs = []
    for _ in range(2):
        done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                              timeout=300, env=env)
        assert done.returncode == 0, done.stderr
        runs.append(json.loads(done.stdout))
    assert runs[0]["passes_imported"] and not runs[1]["passes_imported"]
    assert runs[1]["optimized"] == runs[0]["optimized"]
    assert runs[1]["out"] == runs[0]["out"]
