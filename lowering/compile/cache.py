"""The on-disk cache of compiled code.

Entries are keyed by a hash of the final IR, the target (triple, CPU, features) and the versions of
everything that shaped the code. Each entry is one file ``<key[:2]>/<key>.bin`` written atomically
(a temporary file in the same folder, then ``os.replace``), so concurrent processes compiling the
same function both succeed and a reader never sees half an entry.

Loading code from a directory runs whatever is in it, so the cache is only used where nobody else
can write:

- The directory is opened once, component by component from ``/``, without following a symlink
  unless root or the user owns it (``O_NOFOLLOW``/``O_DIRECTORY`` on every step), and every check
  is made on the open descriptor (``os.fstat``), never on a path that could be swapped in
  between. Folders and entries are opened relative to it (``dir_fd``), so a directory renamed or
  a symlink flipped after the check changes nothing.
- The directory, its folders and its entries must belong to the user and be writable by nobody
  else. Each directory above it must belong to root or the user, and be writable by nobody else
  unless it has the sticky bit (as ``/tmp``: others can add names there but not rename or remove
  ours, and the next directory down must again be ours or root's).
- Every entry carries a SHA-256 of its key, the compiler's fingerprint and its content: a corrupt
  entry, or one copied under another key, reads as missing and is rebuilt (and overwritten).
  This is a check of integrity, not of authenticity: what keeps others' code out is the rules
  above.

A cache that breaks those rules (``CacheDirectoryError``) or cannot be written (read-only, disk
full, no home directory) is not used: ``open_disk_cache`` and ``DiskCache.store`` warn once
(``CacheWarning``) and compiled code stays in memory. The entries together are kept under
``max_bytes`` (the ``cache_max_bytes`` flag): after each store the least recently used entries
(by modification time, which a load moves to now) are removed.

>>> import tempfile, os
>>> cache = DiskCache(os.path.join(tempfile.mkdtemp(), "c"))
>>> key = cache.key("some IR", "target")
>>> cache.load(key) is None
True
>>> cache.store(key, b"object code", {"entry": "f"})
True
>>> cache.load(key)
(b'object code', {'entry': 'f'})
>>> cache.usage()[0]
1
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import secrets
import stat
import struct
import time
import warnings
import weakref

import numpy

from ..config import default_cache_dir

_MAGIC = b"LOWERING-CACHE-2\n"
_VERSION = "lowering-0.1.0"
_ENTRY_NAME = re.compile(r"[0-9a-f]{64}\.bin")
_FOLDER_NAME = re.compile(r"[0-9a-f]{2}")
_KEY = re.compile(r"[0-9a-f]{64}")
_TEMPORARY = ".tmp-"
_STALE_TEMPORARY_NS = 3600 * 10**9  # a writer that has not renamed its file in an hour died
_MAX_SYMLINKS = 40

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_OPEN_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | _CLOEXEC
_OTHERS_WRITE = stat.S_IWGRP | stat.S_IWOTH


class CacheDirectoryError(OSError):
    """The cache directory is unsafe (not ours, or writable by others) or cannot be made."""


class CacheWarning(UserWarning):
    """The disk cache is not used (unsafe or cannot be written); compiled code stays in memory."""


@functools.cache
def compiler_fingerprint() -> str:
    """The compiler's version for cache keys: the package version and the path, size and
    modification time of each of its source files (a changed file means new code).

    >>> len(compiler_fingerprint())
    16
    """
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the package's folder
    digest = hashlib.sha256()  # the files themselves stand for the version
    prefix = len(root) + 1
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(names):
            if name.endswith(".py"):
                path = f"{folder}/{name}"
                info = os.stat(path)
                digest.update(f"{path[prefix:]}|{info.st_size}|{info.st_mtime_ns}\n".encode())
    return digest.hexdigest()[:16]


def format_bytes(count: int) -> str:
    """``count`` bytes for people.

    >>> format_bytes(512), format_bytes(3 << 20), format_bytes(1 << 30)
    ('512 B', '3.0 MiB', '1.0 GiB')
    """
    size, unit = float(count), "B"
    for bigger in ("KiB", "MiB", "GiB", "TiB"):
        if size < 1024:
            break
        size, unit = size / 1024, bigger
    return f"{count} B" if unit == "B" else f"{size:.1f} {unit}"


# ---------------------------------------------------------------------------------------------
# Who may write where


def _me() -> int:
    return os.geteuid()


def _check_above(fd: int, shown: str) -> None:
    """A directory on the way to the cache: root's or ours, and writable by nobody else unless
    sticky (then others cannot rename or remove the next directory down, which is checked)."""
    info = os.fstat(fd)
    if info.st_uid not in (0, _me()):
        raise CacheDirectoryError(
            f"{shown}, on the way to the compile cache, belongs to uid {info.st_uid} (neither "
            f"root nor you): its owner could put another directory in the cache's place")
    if info.st_mode & _OTHERS_WRITE and not info.st_mode & stat.S_ISVTX:
        raise CacheDirectoryError(
            f"{shown}, on the way to the compile cache, is writable by other users (mode "
            f"{stat.S_IMODE(info.st_mode):o}, not sticky): they could put another directory in "
            f"the cache's place; set the cache_dir flag to a private directory")


def _check_private(fd: int, shown: str, what: str = "compile cache directory") -> None:
    """The cache directory or one of its folders: a directory of ours nobody else can write."""
    info = os.fstat(fd)
    if not stat.S_ISDIR(info.st_mode):
        raise CacheDirectoryError(f"{what} {shown} is not a directory")
    if info.st_uid != _me():
        raise CacheDirectoryError(
            f"{what} {shown} belongs to uid {info.st_uid}, not to you (uid {_me()}); point the "
            f"cache_dir flag at a directory of your own")
    if info.st_mode & _OTHERS_WRITE:
        raise CacheDirectoryError(
            f"{what} {shown} is writable by other users (mode {stat.S_IMODE(info.st_mode):o}); "
            f"refusing to load code from it. Run 'chmod 700 {shown}' or set the cache_dir flag "
            f"to a private directory")


def _check_step(fd: int, shown: str, last: bool) -> None:
    if last:
        _check_private(fd, shown)
    else:
        _check_above(fd, shown)


def _open_pinned(path: str, create: bool) -> int:
    """A descriptor of the directory ``path``, reached from ``/`` one component at a time and
    checked on each descriptor (see the module doc); created with mode 0700 where missing if
    ``create``. A missing directory without ``create`` raises ``FileNotFoundError``."""
    pending = [p for p in os.path.abspath(path).split("/") if p][::-1]  # next component last
    fd = os.open("/", _OPEN_DIRECTORY)
    shown, symlinks = "/", 0
    try:
        _check_step(fd, shown, last=not pending)
        while pending:
            name = pending.pop()
            if name == ".":
                continue
            try:
                info = os.stat(name, dir_fd=fd, follow_symlinks=False)
            except FileNotFoundError:
                if not create:
                    raise
                try:
                    os.mkdir(name, 0o700, dir_fd=fd)
                except FileExistsError:
                    pass  # made by someone else meanwhile: checked like any other
                pending.append(name)
                continue
            if stat.S_ISLNK(info.st_mode):
                if info.st_uid not in (0, _me()):
                    raise CacheDirectoryError(
                        f"{os.path.join(shown, name)}, on the way to the compile cache, is a "
                        f"symlink of uid {info.st_uid} (neither root nor you): its owner could "
                        f"point it anywhere")
                symlinks += 1
                if symlinks > _MAX_SYMLINKS:
                    raise CacheDirectoryError(f"too many symlinks on the way to {path}")
                target = os.readlink(name, dir_fd=fd)
                if target.startswith("/"):
                    os.close(fd)
                    fd, shown = os.open("/", _OPEN_DIRECTORY), "/"
                pending.extend(p for p in reversed(target.split("/")) if p)
                continue
            inner = os.open(name, _OPEN_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd, shown = inner, os.path.normpath(os.path.join(shown, name))
            _check_step(fd, shown, last=not pending)
        return fd
    except FileNotFoundError:
        os.close(fd)
        raise
    except CacheDirectoryError:
        os.close(fd)
        raise
    except OSError as exc:
        os.close(fd)
        raise CacheDirectoryError(f"cannot open the compile cache directory {path}: "
                                  f"{exc.strerror or exc}") from exc


# ---------------------------------------------------------------------------------------------
# Warnings, once per directory and problem


_warned: set[tuple[str, str]] = set()


def _warn_once(directory: str, kind: str, message: str) -> None:
    if (directory, kind) in _warned:
        return
    _warned.add((directory, kind))
    warnings.warn(f"{message}; compiled code is kept in memory only", CacheWarning, stacklevel=3)


def open_disk_cache(directory: str, max_bytes: int | None = None) -> "DiskCache | None":
    """``DiskCache(directory, max_bytes)``, or None (after a ``CacheWarning``, once per
    directory) when the directory is unsafe or cannot be made.

    >>> import tempfile, warnings
    >>> shared = tempfile.mkdtemp()
    >>> os.chmod(shared, 0o777)
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     print(open_disk_cache(shared), open_disk_cache(shared))
    None None
    >>> [w.category.__name__ for w in caught]
    ['CacheWarning']
    """
    try:
        return DiskCache(directory, max_bytes)
    except (CacheDirectoryError, FileNotFoundError) as exc:
        _warn_once(os.path.abspath(directory), "open", f"not using the compile cache: {exc}")
        return None


# ---------------------------------------------------------------------------------------------
# The cache


class DiskCache:
    """Compiled payloads (bytes) with JSON metadata, in a private directory held open (see the
    module doc). ``max_bytes`` (None or 0: no bound) bounds the entries' total size."""

    def __init__(self, directory: str | None = None, max_bytes: int | None = None,
                 create: bool = True):
        self.directory = os.path.abspath(directory or default_cache_dir())
        self.max_bytes = max_bytes or None
        # The cache's size as of the last scan plus what was stored here since (None: not
        # scanned yet). A store rescans and evicts only once this passes ``max_bytes``: scanning
        # every entry at every store made a run of many compiles quadratic.
        self._known_bytes: int | None = None
        self._fd = _open_pinned(self.directory, create)
        self._close = weakref.finalize(self, os.close, self._fd)

    def close(self) -> None:
        self._close()

    def __enter__(self) -> "DiskCache":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @staticmethod
    def key(ir_text: str, target: str, extra: str = "") -> str:
        h = hashlib.sha256()
        for part in (_VERSION, numpy.__version__, target, extra, ir_text):
            h.update(part.encode())
            h.update(b"\0")
        return h.hexdigest()

    def _path(self, key: str) -> str:
        """Where the entry of ``key`` lies (for messages and tests; reads go through the pinned
        directory)."""
        return os.path.join(self.directory, key[:2], key + ".bin")

    @staticmethod
    def _digest(key: str, body: bytes) -> bytes:
        """The entry's checksum: it binds the content to the key and the compiler."""
        h = hashlib.sha256(_MAGIC)
        h.update(f"{key}\0{compiler_fingerprint()}\0".encode())
        h.update(body)
        return h.digest()

    # -- folders --------------------------------------------------------------------------------

    def _open_folder(self, name: str, create: bool) -> int | None:
        """A descriptor of the folder ``name`` (checked like the directory), or None when it is
        missing and not ``create``."""
        shown = os.path.join(self.directory, name)
        try:
            fd = os.open(name, _OPEN_DIRECTORY, dir_fd=self._fd)
        except FileNotFoundError:
            if not create:
                return None
            try:
                os.mkdir(name, 0o700, dir_fd=self._fd)
            except FileExistsError:
                pass
            return self._open_folder(name, create=False)
        except OSError as exc:
            if exc.errno in (getattr(os, "ELOOP", -1), getattr(os, "ENOTDIR", -1)):
                raise CacheDirectoryError(f"compile cache folder {shown} is a symlink or not a "
                                          f"directory") from exc
            raise
        try:
            _check_private(fd, shown, "compile cache folder")
        except BaseException:
            os.close(fd)
            raise
        return fd

    def _folders(self):
        """(name, descriptor) of each folder of entries; the caller closes nothing."""
        with os.scandir(self._fd) as listing:
            names = sorted(e.name for e in listing
                           if _FOLDER_NAME.fullmatch(e.name) and e.is_dir(follow_symlinks=False))
        for name in names:
            fd = self._open_folder(name, create=False)
            if fd is None:
                continue
            try:
                yield name, fd
            finally:
                os.close(fd)

    # -- entries --------------------------------------------------------------------------------

    def load(self, key: str) -> tuple[bytes, dict] | None:
        """The entry for ``key``, or None when it is missing, corrupt, made for another key or
        unsafe (someone else's: a warning says so). A hit becomes the most recently used."""
        _check_key(key)
        try:
            folder = self._open_folder(key[:2], create=False)
        except CacheDirectoryError as exc:
            _warn_once(self.directory, "folder", f"not loading from the compile cache: {exc}")
            return None
        except OSError:
            return None
        if folder is None:
            return None
        try:
            fd = os.open(key + ".bin", os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | _CLOEXEC,
                         dir_fd=folder)
        except OSError:
            return None
        finally:
            os.close(folder)
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                return None
            if info.st_uid != _me() or info.st_mode & _OTHERS_WRITE:
                _warn_once(self.directory, "entry",
                           f"ignoring compile cache entry {self._path(key)}: it belongs to uid "
                           f"{info.st_uid} with mode {stat.S_IMODE(info.st_mode):o} (it will be "
                           f"rebuilt)")
                return None
            with open(fd, "rb", closefd=False) as fh:
                entry = self._decode(key, fh.read())
            if entry is not None:
                _touch(fd)
            return entry
        except OSError:
            return None
        finally:
            os.close(fd)

    def _decode(self, key: str, data: bytes) -> tuple[bytes, dict] | None:
        try:
            if not data.startswith(_MAGIC):
                return None
            pos = len(_MAGIC)
            digest = data[pos:pos + 32]
            (meta_len,) = struct.unpack_from("<Q", data, pos + 32)
            body = data[pos + 40:]
            if self._digest(key, body) != digest:
                return None
            meta = json.loads(body[:meta_len].decode())
            return body[meta_len:], meta
        except (struct.error, ValueError, UnicodeDecodeError):
            return None

    def store(self, key: str, payload: bytes, meta: dict) -> bool:
        """Write the entry atomically (concurrent writers of one key all succeed), then evict
        down to ``max_bytes``. Whether it was stored: an entry larger than the bound is not, and
        a cache that cannot be written warns once and stores nothing."""
        _check_key(key)
        meta_bytes = json.dumps(meta, sort_keys=True).encode()
        body = meta_bytes + payload
        blob = (_MAGIC + self._digest(key, body) + struct.pack("<Q", len(meta_bytes)) + body)
        if self.max_bytes is not None and len(blob) > self.max_bytes:
            return False
        try:
            folder = self._open_folder(key[:2], create=True)
            try:
                _write_atomically(folder, key + ".bin", blob)
            finally:
                os.close(folder)
        except CacheDirectoryError as exc:
            _warn_once(self.directory, "folder", f"not writing to the compile cache: {exc}")
            return False
        except OSError as exc:
            _warn_once(self.directory, "write", f"cannot write to the compile cache "
                                                f"{self.directory}: {exc.strerror or exc}")
            return False
        if self.max_bytes is not None:
            try:
                if self._known_bytes is None or self._known_bytes + len(blob) > self.max_bytes:
                    self.evict(self.max_bytes, keep=key)
                else:
                    self._known_bytes += len(blob)
            except OSError as exc:
                _warn_once(self.directory, "evict", f"cannot evict from the compile cache "
                                                    f"{self.directory}: {exc}")
        return True

    # -- the whole cache ------------------------------------------------------------------------

    def _entries(self) -> list[tuple[int, int, str, str]]:
        """(modification time in ns, size, folder, name) of every entry."""
        found = []
        for folder, fd in self._folders():
            with os.scandir(fd) as listing:
                for e in listing:
                    if _ENTRY_NAME.fullmatch(e.name) and e.is_file(follow_symlinks=False):
                        info = e.stat(follow_symlinks=False)
                        found.append((info.st_mtime_ns, info.st_size, folder, e.name))
        return found

    def usage(self) -> tuple[int, int]:
        """(number of entries, their total size in bytes)."""
        entries = self._entries()
        return len(entries), sum(size for _, size, _, _ in entries)

    def evict(self, max_bytes: int, keep: str | None = None) -> int:
        """Remove the least recently used entries (never ``keep``'s) until the rest take at most
        ``max_bytes``, and temporary files a crashed writer left; how many entries went."""
        entries = sorted(self._entries())
        total = sum(size for _, size, _, _ in entries)
        doomed: dict[str, list[str]] = {}
        for _, size, folder, name in entries:
            if total <= max_bytes:
                break
            if keep is not None and name == keep + ".bin":
                continue
            doomed.setdefault(folder, []).append(name)
            total -= size
        removed = 0
        now = time.time_ns()
        for folder, fd in self._folders():
            removed += _unlink_all(fd, doomed.get(folder, ()))
            _unlink_all(fd, _temporaries(fd, older_than=now - _STALE_TEMPORARY_NS))
        self._known_bytes = total
        return removed

    def clear(self) -> int:
        """Remove every entry (and stale temporary file) and the folders left empty; how many
        entries went. Names that are not the cache's own are left alone."""
        removed = 0
        now = time.time_ns()
        emptied = []
        for folder, fd in self._folders():
            with os.scandir(fd) as listing:
                names = [e.name for e in listing
                         if _ENTRY_NAME.fullmatch(e.name) and e.is_file(follow_symlinks=False)]
            removed += _unlink_all(fd, names)
            _unlink_all(fd, _temporaries(fd, older_than=now - _STALE_TEMPORARY_NS))
            emptied.append(folder)
        for folder in emptied:
            try:
                os.rmdir(folder, dir_fd=self._fd)
            except OSError:
                pass  # something else is in it
        self._known_bytes = None
        return removed


def _check_key(key: str) -> None:
    if not _KEY.fullmatch(key):
        raise ValueError(f"not a cache key (64 hex digits): {key!r}")


def _touch(fd: int) -> None:
    """Make the open entry the most recently used (the clock's own resolution, not the file
    system's coarser one, so entries used one after another keep their order)."""
    now = time.time_ns()
    try:
        os.utime(fd, ns=(now, now))
    except OSError:
        pass  # a read-only cache still loads


def _write_atomically(folder: int, name: str, blob: bytes) -> None:
    temporary = f"{_TEMPORARY}{os.getpid()}-{secrets.token_hex(8)}"
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | _CLOEXEC,
                 0o600, dir_fd=folder)
    try:
        try:
            view = memoryview(blob)
            while view:
                view = view[os.write(fd, view):]
            _touch(fd)
        finally:
            os.close(fd)
        os.replace(temporary, name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        try:
            os.unlink(temporary, dir_fd=folder)
        except OSError:
            pass
        raise


def _temporaries(folder: int, older_than: int) -> list[str]:
    with os.scandir(folder) as listing:
        return [e.name for e in listing
                if e.name.startswith(_TEMPORARY) and e.is_file(follow_symlinks=False)
                and e.stat(follow_symlinks=False).st_mtime_ns < older_than]


def _unlink_all(folder: int, names) -> int:
    removed = 0
    for name in names:
        try:
            os.unlink(name, dir_fd=folder)
            removed += 1
        except FileNotFoundError:
            pass  # another process removed it first
    return removed
