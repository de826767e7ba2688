"""The disk cache on a shared machine: the directory is pinned and checked on its descriptor,
unsafe directories (ours or on the way to ours) are refused with a warning, entries are bound to
their key, an unwritable cache falls back to memory, the size bound evicts the least recently
used entries, and ``lowering-opt --cache-info/--cache-clear``.

Another user is simulated by giving files to an unused uid (the suite may run as root)."""
import contextlib
import errno
import gc
import io
import json
import os
import shutil
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import lowering as theano
import lowering.tensor as T
from lowering import cli
from lowering.compile import cache as cache_module
from lowering.compile.cache import CacheDirectoryError, CacheWarning, DiskCache
from lowering.config import Config, ConfigError, config

OTHER_UID = 12345
needs_chown = pytest.mark.skipif(os.geteuid() != 0, reason="giving files to another uid needs root")


def _build(constant: float):
    """A function of its own (the constant makes its IR, and so its cache key, unique)."""
    x = T.dvector("x")
    return theano.function([x], T.sqrt(x) + constant)


def _forget_loaded_code():
    """Drop this process's copies of compiled code, so the next build reads the disk."""
    gc.collect()


def _stored_key(constant: float) -> str:
    """Build ``_build(constant)`` into the disk cache and forget it in this process: its key."""
    f = _build(constant)
    key = f._execute.compiled.key
    del f
    _forget_loaded_code()
    return key


def _entries(directory) -> list[str]:
    return sorted(os.path.join(d, name) for d, _, names in os.walk(directory) for name in names
                  if name.endswith(".bin"))


def _private_dir(path):
    os.makedirs(path, mode=0o700)
    os.chmod(path, 0o700)
    return str(path)


def _give_away(path):
    """Make ``path`` and everything in it belong to another user."""
    for folder, dirs, names in os.walk(path):
        for name in dirs + names:
            os.lchown(os.path.join(folder, name), OTHER_UID, OTHER_UID)
    os.lchown(path, OTHER_UID, OTHER_UID)


def _cache_warnings(caught) -> list[str]:
    return [str(w.message) for w in caught if issubclass(w.category, CacheWarning)]


# ---------------------------------------------------------------------------------------------
# The directory and the way to it


@needs_chown
def test_a_symlink_flipped_after_opening_is_not_followed(tmp_path):
    mine = _private_dir(tmp_path / "mine")
    theirs = _private_dir(tmp_path / "theirs")
    link = tmp_path / "cache"
    link.symlink_to(mine)
    key = DiskCache.key("f", "target")
    DiskCache(theirs).store(key, b"planted code", {"entry": "f"})  # a well-formed entry
    _give_away(theirs)
    cache = DiskCache(str(link))
    link.unlink()
    link.symlink_to(theirs)  # the other user flips the link
    assert cache.load(key) is None
    assert cache.store(key, b"our code", {"entry": "f"})
    assert cache.load(key) == (b"our code", {"entry": "f"})
    assert _entries(theirs) == [os.path.join(theirs, key[:2], key + ".bin")]
    assert DiskCache(mine).load(key) == (b"our code", {"entry": "f"})
    with pytest.raises(CacheDirectoryError, match=f"belongs to uid {OTHER_UID}"):
        DiskCache(str(link))  # opened after the flip: their directory is refused


@needs_chown
def test_a_symlink_is_followed_only_if_root_or_we_own_it(tmp_path):
    mine = _private_dir(tmp_path / "mine")
    link = tmp_path / "cache"
    link.symlink_to("mine")  # relative, like most links in a home directory
    with config.change_flags(cache_dir=str(link)):
        with warnings.catch_warnings():
            warnings.simplefilter("error", CacheWarning)
            f = _build(42.5)
        np.testing.assert_array_equal(f(np.array([9.0])), [45.5])
    stored = _entries(mine)
    assert stored  # the optimized graph, the object code, ...
    os.lchown(link, OTHER_UID, OTHER_UID)  # now they can point it anywhere
    with config.change_flags(cache_dir=str(link)):
        with pytest.warns(CacheWarning, match="symlink of uid 12345"):
            g = _build(41.5)
        np.testing.assert_array_equal(g(np.array([4.0, 16.0])), [43.5, 45.5])
    assert _entries(mine) == stored


@pytest.mark.parametrize("mode", [0o770, 0o757])
def test_a_parent_others_can_write_is_refused_and_function_still_works(tmp_path, mode):
    parent = tmp_path / "shared"
    parent.mkdir()
    os.chmod(parent, mode)
    directory = parent / "cache"
    with config.change_flags(cache_dir=str(directory)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            f = _build(43.5 + mode)
            g = _build(44.5 + mode)
        np.testing.assert_array_equal(f(np.array([1.0])), [44.5 + mode])
        np.testing.assert_array_equal(g(np.array([4.0])), [46.5 + mode])
    messages = _cache_warnings(caught)
    assert len(messages) == 1, messages  # once, however many functions are built
    assert "on the way to the compile cache, is writable by other users" in messages[0]
    assert str(parent) in messages[0]
    assert not directory.exists()


@needs_chown
def test_a_sticky_parent_is_accepted_only_if_root_or_we_own_it(tmp_path):
    parent = tmp_path / "sticky"
    parent.mkdir()
    os.chmod(parent, 0o1777)  # as /tmp
    cache = DiskCache(str(parent / "cache"))
    key = cache.key("g", "t")
    assert cache.store(key, b"code", {})
    assert cache.load(key) == (b"code", {})
    os.chown(parent, OTHER_UID, OTHER_UID)
    with pytest.raises(CacheDirectoryError, match=f"belongs to uid {OTHER_UID}"):
        DiskCache(str(parent / "cache"))


def test_a_folder_others_can_write_is_not_loaded_from(tmp_path):
    directory = str(tmp_path / "cache")
    with config.change_flags(cache_dir=directory):
        key = _stored_key(45.5)
        folder = os.path.join(directory, key[:2])
        os.chmod(folder, 0o777)
        with pytest.warns(CacheWarning, match="compile cache folder .* is writable by other"):
            g = _build(45.5)
        assert not g._execute.compiled.from_disk
        np.testing.assert_array_equal(g(np.array([25.0])), [50.5])


@needs_chown
def test_an_entry_of_another_user_is_ignored_and_replaced(tmp_path):
    directory = str(tmp_path / "cache")
    with config.change_flags(cache_dir=directory):
        key = _stored_key(46.5)
        path = DiskCache(directory)._path(key)
        os.chown(path, OTHER_UID, OTHER_UID)
        with pytest.warns(CacheWarning, match=f"belongs to uid {OTHER_UID}"):
            g = _build(46.5)
        assert not g._execute.compiled.from_disk
        np.testing.assert_array_equal(g(np.array([36.0])), [52.5])
        assert os.stat(path).st_uid == os.geteuid()  # the rebuilt entry took its place


# ---------------------------------------------------------------------------------------------
# Entries bound to their key


def test_an_entry_copied_under_another_key_is_rejected_and_rebuilt(tmp_path):
    directory = str(tmp_path / "cache")
    with config.change_flags(cache_dir=directory):
        a, b = _build(100.0), _build(200.0)
        key_a, key_b = a._execute.compiled.key, b._execute.compiled.key
        del a, b
        _forget_loaded_code()
        cache = DiskCache(directory)
        shutil.copyfile(cache._path(key_a), cache._path(key_b))
        b = _build(200.0)
        assert not b._execute.compiled.from_disk
        np.testing.assert_array_equal(b(np.array([4.0])), [202.0])  # B's code, not A's
        del b
        _forget_loaded_code()
        b = _build(200.0)  # the entry was overwritten with B's own code
        assert b._execute.compiled.from_disk
        np.testing.assert_array_equal(b(np.array([9.0])), [203.0])


def test_an_entry_is_bound_to_its_key_and_the_compiler(tmp_path, monkeypatch):
    cache = DiskCache(str(tmp_path / "c"))
    key_a, key_b = cache.key("a", "t"), cache.key("b", "t")
    cache.store(key_a, b"code of a", {"entry": "a"})
    os.makedirs(os.path.dirname(cache._path(key_b)), exist_ok=True)
    shutil.copyfile(cache._path(key_a), cache._path(key_b))
    assert cache.load(key_b) is None
    assert cache.load(key_a) == (b"code of a", {"entry": "a"})
    monkeypatch.setattr(cache_module, "compiler_fingerprint", lambda: "another compiler")
    assert cache.load(key_a) is None


POOL_SCRIPT = textwrap.dedent("""
    import json
    import numpy as np
    import lowering as theano
    import lowering.tensor as T
    x = T.dvector("x")
    f = theano.function([x], T.sqrt(x) * 2)
    print(json.dumps({"key": f._execute.compiled.key,
                      "out": f(np.array([1.0, 4.0, 9.0])).tolist()}))
""")


def test_a_thread_pool_entry_copied_from_another_key_is_rebuilt(tmp_path):
    from lowering.compile.cpu.build import library_key
    from lowering.llvm.cpu.thread_pool import POOL_FUNCTION, thread_pool_description
    directory = str(tmp_path / "cache")
    script = tmp_path / "pool.py"
    script.write_text(POOL_SCRIPT)
    env = {k: v for k, v in os.environ.items() if k not in ("LOWERING_FLAGS", "THEANO_FLAGS")}
    env.update(LOWERING_CACHE_DIR=directory, LOWERING_FLAGS="openmp=True,cpu_threads=2")
    # The child imports the package this process imported (the checkout or the installed
    # copy): the keys computed here hold the compiler fingerprint of that one.
    package_root = os.path.dirname(os.path.dirname(os.path.abspath(theano.__file__)))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, env.get("PYTHONPATH")]))

    def run():
        done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                              timeout=300, env=env)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    first = run()
    cache = DiskCache(directory)
    pool_key = library_key(thread_pool_description(), opt=0)  # (the pool is compiled at O0)
    pool_path = cache._path(pool_key)
    assert os.path.exists(pool_path)
    shutil.copyfile(cache._path(first["key"]), pool_path)
    copied = open(pool_path, "rb").read()
    second = run()
    assert second["out"] == first["out"] == [2.0, 4.0, 6.0]
    assert open(pool_path, "rb").read() != copied
    from lowering.llvm.jit import JitLibrary
    assert JitLibrary(cache.load(pool_key)[0]).address(POOL_FUNCTION)


# ---------------------------------------------------------------------------------------------
# A cache that cannot be written


def test_a_full_disk_warns_once_and_the_functions_work(tmp_path, monkeypatch):
    def disk_full(fd, data):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    with config.change_flags(cache_dir=str(tmp_path / "cache")):
        monkeypatch.setattr(os, "write", disk_full)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            f, g = _build(47.5), _build(48.5)
        monkeypatch.undo()
        np.testing.assert_array_equal(f(np.array([4.0])), [49.5])
        np.testing.assert_array_equal(g(np.array([9.0])), [51.5])
    messages = _cache_warnings(caught)
    assert len(messages) == 1, messages
    assert "No space left on device" in messages[0]
    assert _entries(tmp_path / "cache") == []
    assert [n for _, _, names in os.walk(tmp_path / "cache") for n in names] == []


def _read_only_file_system(monkeypatch):
    """Creating anything fails as on a read-only mount (chmod would not stop root)."""
    real_open = os.open

    def refuse(*args, **kwargs):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS))

    def open_without_creating(path, flags, *args, **kwargs):
        if flags & os.O_CREAT:
            refuse()
        return real_open(path, flags, *args, **kwargs)
    monkeypatch.setattr(os, "open", open_without_creating)
    monkeypatch.setattr(os, "mkdir", refuse)


def test_a_read_only_cache_still_loads_and_warns_once_for_new_code(tmp_path, monkeypatch):
    with config.change_flags(cache_dir=str(tmp_path / "cache")):
        f = _build(49.5)
        del f
        _forget_loaded_code()
        _read_only_file_system(monkeypatch)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            f = _build(49.5)
            g, h = _build(50.5), _build(51.5)
        monkeypatch.undo()
        assert f._execute.compiled.from_disk
        np.testing.assert_array_equal(f(np.array([1.0])), [50.5])
        np.testing.assert_array_equal(g(np.array([4.0])), [52.5])
        np.testing.assert_array_equal(h(np.array([9.0])), [54.5])
    messages = _cache_warnings(caught)
    assert len(messages) == 1, messages
    assert "Read-only file system" in messages[0]


HOME_SCRIPT = textwrap.dedent("""
    import numpy as np
    import lowering as theano
    import lowering.tensor as T
    x = T.dvector("x")
    f = theano.function([x], T.sqrt(x) + 1)
    g = theano.function([x], T.sqrt(x) + 2)
    print(f(np.array([4.0])).tolist(), g(np.array([9.0])).tolist())
""")


def test_an_unwritable_home_warns_once_and_the_functions_work(tmp_path):
    script = tmp_path / "home.py"
    script.write_text(HOME_SCRIPT)
    env = {k: v for k, v in os.environ.items()
           if k not in ("LOWERING_FLAGS", "THEANO_FLAGS", "LOWERING_CACHE_DIR", "XDG_CACHE_HOME")}
    env["HOME"] = "/dev/null"  # ~/.cache cannot be made, even by root
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["[3.0]", "[5.0]"]
    assert done.stderr.count("CacheWarning") == 1, done.stderr
    assert "/dev/null/.cache/lowering" in done.stderr


# ---------------------------------------------------------------------------------------------
# The size bound


def test_the_least_recently_used_entries_go_first(tmp_path):
    cache = DiskCache(str(tmp_path / "c"))
    keys = [cache.key(f"f{i}", "t") for i in range(5)]
    cache.store(keys[0], b"x" * 1000, {})
    size = cache.usage()[1]  # one entry: header, metadata and payload
    bounded = DiskCache(str(tmp_path / "c"), max_bytes=3 * size)
    for key in keys[1:3]:
        assert bounded.store(key, b"x" * 1000, {})
    assert bounded.usage() == (3, 3 * size)
    assert bounded.load(keys[0]) is not None  # now the most recently used
    assert bounded.store(keys[3], b"x" * 1000, {})  # one must go: keys[1], the least recent
    present = [os.path.exists(cache._path(k)) for k in keys]  # (a load would count as a use)
    assert present == [True, False, True, True, False]
    assert bounded.store(keys[4], b"x" * 1000, {})  # then keys[2]
    present = [os.path.exists(cache._path(k)) for k in keys]
    assert present == [True, False, False, True, True]
    assert bounded.usage() == (3, 3 * size)
    assert bounded.load(keys[0]) == (b"x" * 1000, {})


def test_an_entry_larger_than_the_bound_is_not_stored(tmp_path):
    cache = DiskCache(str(tmp_path / "c"), max_bytes=500)
    key = cache.key("big", "t")
    assert not cache.store(key, b"x" * 1000, {})
    assert cache.load(key) is None and cache.usage() == (0, 0)


def test_functions_keep_the_cache_under_the_bound(tmp_path):
    directory = str(tmp_path / "cache")
    with config.change_flags(cache_dir=directory, cache_max_bytes=0):
        first = _build(60.5)
    entries_per_function, size_per_function = DiskCache(directory).usage()
    bound = 3 * size_per_function
    with config.change_flags(cache_dir=directory, cache_max_bytes=bound):
        functions = [first] + [_build(61.5 + i) for i in range(5)]
        for i, f in enumerate(functions):
            np.testing.assert_array_equal(f(np.array([4.0])), [62.5 + i])
    entries, size = DiskCache(directory).usage()
    assert size_per_function * 2 < size <= bound
    assert entries < 6 * entries_per_function  # some went


def test_the_bound_flag_takes_sizes_with_units():
    assert Config(environ={}).cache_max_bytes == 1 << 30
    assert Config(environ={"LOWERING_FLAGS": "cache_max_bytes=512M"}).cache_max_bytes == 512 << 20
    assert Config(environ={"LOWERING_FLAGS": "cache_max_bytes=2G"}).cache_max_bytes == 2 << 30
    assert Config(environ={"LOWERING_FLAGS": "cache_max_bytes=0"}).cache_max_bytes == 0
    with pytest.raises(ConfigError, match="size in bytes"):
        Config(environ={"LOWERING_FLAGS": "cache_max_bytes=lots"}).cache_max_bytes


# ---------------------------------------------------------------------------------------------
# lowering-opt --cache-info / --cache-clear


def _cli(*argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = cli.main(list(argv))
    return status, out.getvalue(), err.getvalue()


def test_cache_info_and_clear(tmp_path):
    directory = str(tmp_path / "cache")
    cache = DiskCache(directory)
    for i in range(3):
        cache.store(cache.key(f"f{i}", "t"), b"x" * 100, {})
    entries, size = cache.usage()
    mine = os.path.join(directory, "notes.txt")
    open(mine, "w").write("not an entry")
    elsewhere = _private_dir(tmp_path / "elsewhere")
    kept = cache.key("kept", "t")
    DiskCache(elsewhere).store(kept, b"y", {})
    free = next(f"{n:02x}" for n in range(256) if not os.path.exists(
        os.path.join(directory, f"{n:02x}")))
    os.symlink(os.path.join(elsewhere, kept[:2]), os.path.join(directory, free))
    with config.change_flags(cache_dir=directory, cache_max_bytes=5 << 20):
        status, out, _ = _cli("--cache-info")
        assert status == 0
        assert f"location: {directory}" in out
        assert f"entries:  {entries}" in out and f"({size} bytes)" in out
        assert "bound:    5.0 MiB (5242880 bytes" in out
        status, out, _ = _cli("--cache-clear", "--cache-info")
        assert status == 0
        assert f"removed {entries} entries" in out and "entries:  0" in out
    assert cache.usage() == (0, 0)
    assert open(mine).read() == "not an entry"
    assert len(_entries(elsewhere)) == 1  # a symlinked folder is not followed


def test_cache_info_refuses_an_unsafe_directory(tmp_path):
    directory = tmp_path / "cache"
    directory.mkdir()
    os.chmod(directory, 0o777)
    with config.change_flags(cache_dir=str(directory)):
        status, _, err = _cli("--cache-clear")
    assert status == 1 and "writable by other users" in err


def test_cache_info_of_a_directory_not_made_yet(tmp_path):
    directory = tmp_path / "new"
    with config.change_flags(cache_dir=str(directory)):
        status, out, _ = _cli("--cache-info")
    assert status == 0 and "(does not exist yet)" in out and "entries:  0" in out
    assert not directory.exists()


def test_a_store_rescans_once_past_the_bound_and_counts_other_writers_then(tmp_path):
    # A store adds its size to what the last scan found instead of scanning every entry each
    # time; once that passes the bound it rescans, which sees what other writers stored.
    other = DiskCache(str(tmp_path / "c"))
    keys = [other.key(f"g{i}", "t") for i in range(6)]
    other.store(keys[0], b"x" * 1000, {})
    size = other.usage()[1]
    bounded = DiskCache(str(tmp_path / "c"), max_bytes=3 * size)
    assert bounded.store(keys[1], b"x" * 1000, {})  # scans: two entries
    for key in keys[2:4]:
        assert other.store(key, b"x" * 1000, {})  # unbounded: four entries
    assert bounded.store(keys[4], b"x" * 1000, {})  # its count: three, within the bound
    assert bounded.usage() == (5, 5 * size)
    assert bounded.store(keys[5], b"x" * 1000, {})  # its count passes it: rescans, evicts
    assert bounded.usage() == (3, 3 * size)
    assert os.path.exists(bounded._path(keys[5]))
