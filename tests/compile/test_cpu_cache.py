"""Compiled CPU code in the disk cache: reused by later processes, rebuilt when corrupt, shared by
concurrent processes, relocated or disabled by flags, refused in an unsafe directory."""
import gc
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import lowering as theano
import lowering.tensor as T
from lowering.compile.cache import CacheWarning, DiskCache
from lowering.config import config

SCRIPT = textwrap.dedent("""
    import json, sys
    import numpy as np
    import lowering as theano
    import lowering.tensor as T
    x = T.fvector("x")
    f = theano.function([x], T.tanh(x) * 3 + 1)
    out = f(np.linspace(-1, 1, 5, dtype=np.float32))
    print(json.dumps({"from_disk": f._execute.compiled.from_disk, "out": out.tolist()}))
""")
EXPECTED = (np.tanh(np.linspace(-1, 1, 5, dtype=np.float32)) * 3 + 1).tolist()


@pytest.fixture
def script(tmp_path):
    path = tmp_path / "program.py"
    path.write_text(SCRIPT)
    return str(path)


def _environment(**values) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("LOWERING_FLAGS", "THEANO_FLAGS")}
    env.update(values)
    return env


def _run(script: str, **env) -> dict:
    done = subprocess.run([sys.executable, script], capture_output=True, text=True, timeout=300,
                          env=_environment(**env))
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _entries(directory) -> list[str]:
    return sorted(os.path.join(d, name) for d, _, names in os.walk(directory) for name in names)


def test_a_later_process_loads_the_compiled_code_from_disk(tmp_path, script):
    cache = str(tmp_path / "cache")
    first = _run(script, LOWERING_CACHE_DIR=cache)
    second = _run(script, LOWERING_CACHE_DIR=cache)
    assert (first["from_disk"], second["from_disk"]) == (False, True)
    np.testing.assert_allclose(first["out"], EXPECTED, rtol=1e-6)
    assert second["out"] == first["out"]
    assert os.stat(cache).st_mode & 0o777 == 0o700


def test_the_cache_dir_flag_relocates_the_cache(tmp_path, script):
    cache = str(tmp_path / "elsewhere")
    assert not _run(script, LOWERING_FLAGS=f"cache_dir={cache}")["from_disk"]
    assert _entries(cache)
    assert _run(script, LOWERING_FLAGS=f"cache_dir={cache}")["from_disk"]


def test_concurrent_processes_compiling_one_function_both_succeed(tmp_path, script):
    cache = str(tmp_path / "cache")
    processes = [subprocess.Popen([sys.executable, script], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True,
                                  env=_environment(LOWERING_CACHE_DIR=cache))
                 for _ in range(2)]
    results = [p.communicate(timeout=300) for p in processes]
    for process, (out, err) in zip(processes, results):
        assert process.returncode == 0, err
        np.testing.assert_allclose(json.loads(out)["out"], EXPECTED, rtol=1e-6)
    assert _run(script, LOWERING_CACHE_DIR=cache)["from_disk"]


def _build(constant: float):
    """A function of its own (the constant makes its IR, and so its cache key, unique)."""
    x = T.dvector("x")
    return theano.function([x], T.sqrt(x) + constant)


def test_a_corrupt_entry_is_rebuilt(tmp_path):
    with config.change_flags(cache_dir=str(tmp_path / "cache")):
        f = _build(17.25)
        key = f._execute.compiled.key
        assert not f._execute.compiled.from_disk
        del f
        gc.collect()  # the process no longer holds the code, so the next build reads the disk
        for path in _entries(tmp_path / "cache"):
            data = bytearray(open(path, "rb").read())
            data[len(data) // 2] ^= 0xFF
            open(path, "wb").write(bytes(data))
        g = _build(17.25)
        assert g._execute.compiled.key == key and not g._execute.compiled.from_disk
        np.testing.assert_array_equal(g(np.array([4.0, 9.0])), [19.25, 20.25])
        del g
        gc.collect()
        assert _build(17.25)._execute.compiled.from_disk  # the rebuilt entry was stored


def test_an_entry_that_is_not_object_code_is_rebuilt(tmp_path):
    with config.change_flags(cache_dir=str(tmp_path / "cache")):
        f = _build(-3.5)
        key, meta = f._execute.compiled.key, None
        del f
        gc.collect()
        cache = DiskCache(str(tmp_path / "cache"))
        meta = cache.load(key)[1]
        cache.store(key, b"not object code", meta)  # a well-formed entry with a bad payload
        g = _build(-3.5)
        assert not g._execute.compiled.from_disk
        np.testing.assert_array_equal(g(np.array([1.0])), [-2.5])


def test_the_cache_can_be_disabled(tmp_path):
    directory = tmp_path / "unused"
    with config.change_flags(cache=False, cache_dir=str(directory)):
        f = _build(0.125)
        np.testing.assert_array_equal(f(np.array([0.0])), [0.125])
        assert not f._execute.compiled.from_disk
    assert not directory.exists() or not _entries(directory)


def test_an_unsafe_cache_directory_is_refused_with_a_warning_and_the_code_stays_in_memory(
        tmp_path):
    directory = tmp_path / "shared"
    directory.mkdir()
    os.chmod(directory, 0o777)
    with config.change_flags(cache_dir=str(directory)):
        with pytest.warns(CacheWarning, match="writable by other users") as caught:
            f = _build(2.0)
        np.testing.assert_array_equal(f(np.array([1.0])), [3.0])
    assert str(directory) in str(caught[0].message)
    assert _entries(directory) == []
