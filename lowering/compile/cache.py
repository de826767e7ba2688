"""The on-disk cache of compiled code.

Entries are keyed by a hash of the final IR, the target (triple, CPU, features) and the versions of
everything that shaped the code. Each entry is one file written atomically (a temporary file in the
same directory, then ``os.replace``), so concurrent processes compiling the same function both
succeed and a reader never sees half an entry. Every entry carries a checksum of its payload: a
corrupt entry is treated as missing and rebuilt. The directory must be private to the user (owned
by them, not writable by others); a directory others can write is refused, because loading code
from it would run whatever they put there.

>>> import tempfile, os
>>> cache = DiskCache(os.path.join(tempfile.mkdtemp(), "c"))
>>> key = cache.key("some IR", "target")
>>> cache.load(key) is None
True
>>> cache.store(key, b"object code", {"entry": "f"})
>>> cache.load(key)
(b'object code', {'entry': 'f'})
"""
from __future__ import annotations

import hashlib
import json
import os
import stat
import struct
import tempfile

import numpy

_MAGIC = b"LOWERING-CACHE-1\n"
_VERSION = "lowering-0.1.0"


class CacheDirectoryError(OSError):
    """The cache directory is unsafe (not ours, or writable by others) or cannot be made."""


def default_cache_dir() -> str:
    """``$LOWERING_CACHE_DIR``, else ``$XDG_CACHE_HOME/lowering``, else ``~/.cache/lowering``."""
    env = os.environ.get("LOWERING_CACHE_DIR")
    if env:
        return env
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "lowering")


def ensure_private_dir(path: str) -> str:
    """Create ``path`` with mode 0700 if needed, and refuse it unless it is private to us."""
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        info = os.stat(path)
    except OSError as exc:
        raise CacheDirectoryError(f"cannot create the compile cache directory {path}: {exc}") from exc
    if not stat.S_ISDIR(info.st_mode):
        raise CacheDirectoryError(f"compile cache path {path} is not a directory")
    if hasattr(os, "getuid") and info.st_uid != os.getuid():
        raise CacheDirectoryError(
            f"compile cache directory {path} belongs to uid {info.st_uid}, not to you "
            f"(uid {os.getuid()}); point the cache_dir flag at a directory of your own")
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise CacheDirectoryError(
            f"compile cache directory {path} is writable by other users (mode "
            f"{stat.S_IMODE(info.st_mode):o}); refusing to load code from it. Run "
            f"'chmod 700 {path}' or set the cache_dir flag to a private directory")
    return path


class DiskCache:
    """Compiled payloads (bytes) with JSON metadata, in a private directory."""

    def __init__(self, directory: str | None = None):
        self.directory = ensure_private_dir(directory or default_cache_dir())

    @staticmethod
    def key(ir_text: str, target: str, extra: str = "") -> str:
        h = hashlib.sha256()
        for part in (_VERSION, numpy.__version__, target, extra, ir_text):
            h.update(part.encode())
            h.update(b"\0")
        return h.hexdigest()

    def _path(self, key: str) -> str:
        return os.path.join(self.directory, key[:2], key + ".bin")

    def load(self, key: str) -> tuple[bytes, dict] | None:
        """The entry for ``key``, or None when it is missing or corrupt."""
        try:
            with open(self._path(key), "rb") as fh:
                data = fh.read()
        except OSError:
            return None
        try:
            if not data.startswith(_MAGIC):
                return None
            pos = len(_MAGIC)
            digest = data[pos:pos + 32]
            (meta_len,) = struct.unpack_from("<Q", data, pos + 32)
            body = data[pos + 40:]
            if hashlib.sha256(body).digest() != digest:
                return None
            meta = json.loads(body[:meta_len].decode())
            return body[meta_len:], meta
        except (struct.error, ValueError, UnicodeDecodeError):
            return None

    def store(self, key: str, payload: bytes, meta: dict) -> None:
        """Write the entry atomically; concurrent writers of one key all succeed."""
        path = self._path(key)
        folder = os.path.dirname(path)
        os.makedirs(folder, mode=0o700, exist_ok=True)
        meta_bytes = json.dumps(meta, sort_keys=True).encode()
        body = meta_bytes + payload
        blob = _MAGIC + hashlib.sha256(body).digest() + struct.pack("<Q", len(meta_bytes)) + body
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(blob)
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
