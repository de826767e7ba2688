"""The disk cache: private directory, atomic entries, corrupt entries rebuilt, concurrent writers."""
import multiprocessing
import os

import pytest

from lowering.compile.cache import CacheDirectoryError, DiskCache


def test_store_then_load_round_trips(tmp_path):
    cache = DiskCache(str(tmp_path / "c"))
    key = cache.key("ir", "target")
    cache.store(key, b"\x00\x01payload", {"entry": "main", "n": 3})
    assert cache.load(key) == (b"\x00\x01payload", {"entry": "main", "n": 3})


def test_key_depends_on_ir_and_target():
    assert DiskCache.key("a", "t") != DiskCache.key("b", "t")
    assert DiskCache.key("a", "t") != DiskCache.key("a", "u")
    assert DiskCache.key("a", "t") == DiskCache.key("a", "t")


def test_new_directory_is_private(tmp_path):
    DiskCache(str(tmp_path / "new"))
    assert os.stat(tmp_path / "new").st_mode & 0o777 == 0o700


def test_directory_writable_by_others_is_refused(tmp_path):
    d = tmp_path / "shared"
    d.mkdir()
    os.chmod(d, 0o777)
    with pytest.raises(CacheDirectoryError, match="writable by other users"):
        DiskCache(str(d))


def test_path_that_is_a_file_is_refused(tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(CacheDirectoryError):
        DiskCache(str(f))


@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage"])
def test_corrupt_entry_reads_as_missing_and_is_rebuilt(tmp_path, damage):
    cache = DiskCache(str(tmp_path / "c"))
    key = cache.key("ir", "t")
    cache.store(key, b"good code", {"a": 1})
    path = cache._path(key)
    data = open(path, "rb").read()
    if damage == "truncate":
        data = data[: len(data) // 2]
    elif damage == "flip":
        data = data[:-1] + bytes([data[-1] ^ 0xFF])
    else:
        data = b"not a cache entry"
    open(path, "wb").write(data)
    assert cache.load(key) is None
    cache.store(key, b"good code", {"a": 1})
    assert cache.load(key) == (b"good code", {"a": 1})


def _writer(directory, key, payload, rounds):
    cache = DiskCache(directory)
    for _ in range(rounds):
        cache.store(key, payload, {"w": 1})
        got = cache.load(key)
        assert got is not None and got[0] == payload


def test_concurrent_processes_writing_one_key_all_succeed(tmp_path):
    directory = str(tmp_path / "c")
    key = DiskCache(directory).key("same ir", "t")
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(directory, key, b"x" * 100_000, 30)) for _ in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert [p.exitcode for p in procs] == [0, 0, 0, 0]
    assert DiskCache(directory).load(key)[0] == b"x" * 100_000
    leftovers = [n for n in os.listdir(os.path.join(directory, key[:2])) if n.startswith(".tmp-")]
    assert leftovers == []
