"""Configuration flags, read from ``LOWERING_FLAGS`` (and ``THEANO_FLAGS`` for migrating code).

Both variables hold comma-separated ``key=value`` pairs, as Theano's do::

    THEANO_FLAGS=mode=FAST_RUN,device=cpu,floatX=float32 python train.py
    LOWERING_FLAGS="contexts=dev0->cuda0;dev1->cuda1,floatX=float32" python train.py

``THEANO_FLAGS`` is read first, so ``LOWERING_FLAGS`` wins where both set a flag. Flags are attributes
of ``config``; dotted flags are reached through their section (``config.gpuarray.preallocate``).
Every value is checked when it is set: an unknown flag is an error naming the nearest known ones,
and a bad value is an error naming the allowed values.

>>> config.floatX in ("float64", "float32", "float16")
True
>>> with config.change_flags(floatX="float32"):
...     config.floatX
'float32'
>>> config.floatX = "float16x"
Traceback (most recent call last):
    ...
lowering.config.ConfigError: bad value 'float16x' for flag floatX; allowed values: float64, float32, float16
"""
from __future__ import annotations

import contextlib
import difflib
import os
import re
from dataclasses import dataclass
from typing import Any, Callable, Iterator


class ConfigError(ValueError):
    """A bad flag value, or a malformed flags string."""


class UnknownFlagError(ConfigError, AttributeError):
    """A flag name that does not exist (also an AttributeError, so ``hasattr`` works)."""


# ---------------------------------------------------------------------------------------------
# Value parsers: each takes a string (from the environment) or a Python value and returns the
# checked value, or raises ConfigError saying what is allowed.


def _enum(*allowed: str) -> Callable[[Any], str]:
    def parse(value):
        text = str(value)
        if text not in allowed:
            raise ConfigError(f"allowed values: {', '.join(allowed)}")
        return text
    parse.allowed = allowed
    return parse


def _bool(value) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise ConfigError("allowed values: True, False (or 1, 0)")


def _int(value) -> int:
    if isinstance(value, bool):
        raise ConfigError("expected an integer")
    try:
        return int(value)
    except (TypeError, ValueError):
        raise ConfigError("expected an integer") from None


def _nonnegative_int(value) -> int:
    number = _int(value)
    if number < 0:
        raise ConfigError("expected an integer >= 0")
    return number


_SIZE_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def _byte_size(value) -> int:
    """Bytes: an integer, or one with a K, M, G or T suffix (powers of 1024)."""
    if isinstance(value, bool):
        raise ConfigError("expected a size in bytes")
    if isinstance(value, int):
        number = value
    else:
        match = re.fullmatch(r"\s*(\d+)\s*([KMGT]?)(?:i?B)?\s*", str(value), re.IGNORECASE)
        if match is None:
            raise ConfigError("expected a size in bytes, e.g. 1073741824, 512M or 2G")
        number = int(match.group(1)) * _SIZE_UNITS[match.group(2).upper()]
    if number < 0:
        raise ConfigError("expected a size >= 0")
    return number


def _float(value) -> float:
    if isinstance(value, bool):
        raise ConfigError("expected a number")
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ConfigError("expected a number") from None


def _str(value) -> str:
    if not isinstance(value, (str, os.PathLike)):
        raise ConfigError("expected a string")
    return os.fspath(value)


_DEVICE = re.compile(r"cpu|cuda\d*|gpu\d*")


def _device(value) -> str:
    text = str(value)
    if not _DEVICE.fullmatch(text):
        raise ConfigError("allowed values: cpu, cuda, cuda0, cuda1, ... (gpu, gpu0, ... as in Theano)")
    return text


_GPU_ARCH = re.compile(r"sm_\d+[af]?")


def _gpu_arch(value) -> str:
    text = str(value)
    if not _GPU_ARCH.fullmatch(text):
        raise ConfigError("expected an NVIDIA GPU architecture such as sm_75, sm_80, sm_90, "
                          "sm_90a, sm_100 or sm_120")
    return text


def _optimizer_list(value) -> str:
    """Colon-separated optimization stage or tag names, e.g. ``fuse:inplace``."""
    text = _str(value)
    if any(not part.strip() for part in text.split(":")) and text:
        raise ConfigError("expected names separated by ':' (e.g. fuse:inplace)")
    return text


def parse_contexts(text: str) -> dict[str, str]:
    """The ``contexts`` flag as a dict from context name to device.

    >>> parse_contexts("dev0->cuda0;dev1->cuda1")
    {'dev0': 'cuda0', 'dev1': 'cuda1'}
    >>> parse_contexts("")
    {}
    """
    out: dict[str, str] = {}
    for entry in filter(None, (e.strip() for e in text.split(";"))):
        name, arrow, device = entry.partition("->")
        name, device = name.strip(), device.strip()
        if not arrow or not name or not re.fullmatch(r"cuda\d*", device):
            raise ConfigError(f"bad context entry {entry!r}; expected name->cudaN, "
                              f"e.g. dev0->cuda0;dev1->cuda1")
        if name in out:
            raise ConfigError(f"context {name!r} is defined twice")
        out[name] = device
    return out


def _contexts(value) -> str:
    text = _str(value)
    parse_contexts(text)
    return text


def _feature_string(value) -> str:
    """LLVM's comma-separated feature string; ':' also separates (``LOWERING_FLAGS`` splits
    flags at commas)."""
    features = [f.strip() for f in re.split(r"[,:]", _str(value)) if f.strip()]
    bad = [f for f in features if not re.fullmatch(r"[+-][\w.-]+", f)]
    if bad:
        raise ConfigError(f"expected LLVM features as +name or -name, separated by ':' or ',', "
                          f"not {bad[0]!r}")
    return ",".join(features)


def _cache_dir(value) -> str:
    return os.path.expanduser(_str(value))


# ---------------------------------------------------------------------------------------------
# The flags


@dataclass(frozen=True)
class Flag:
    """One flag: its name, default, parser and a line of documentation."""

    name: str
    default: Any
    parse: Callable[[Any], Any]
    doc: str


def default_cache_dir(environ=None) -> str:
    """``$LOWERING_CACHE_DIR``, else ``$XDG_CACHE_HOME/lowering``, else ``~/.cache/lowering``.

    >>> default_cache_dir({"LOWERING_CACHE_DIR": "/srv/cache"})
    '/srv/cache'
    """
    environ = os.environ if environ is None else environ
    if environ.get("LOWERING_CACHE_DIR"):
        return os.path.expanduser(environ["LOWERING_CACHE_DIR"])
    base = environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "lowering")


class FromEnviron:
    """A flag default computed from the environment the flags are read from (so a ``Config``
    built from a given mapping does not see the process's variables)."""

    def __init__(self, compute: Callable[[Any], Any]):
        self.compute = compute


# Theano's ``warn.*`` flags: warnings about results that versions of Theano before the one named
# got wrong. Programs set them to silence those warnings; this compiler never had those bugs, so
# they are accepted, kept and change nothing. Defaults are Theano 1.0's (warn.ignore_bug_before
# 0.9: bugs fixed in 0.9 or before are not warned about).
_THEANO_BUG_FLAGS = {  # flag -> Theano version that fixed the bug
    "argmax_pushdown_bug": "0.3", "gpusum_01_011_0111_bug": "0.3", "sum_sum_bug": "0.3",
    "sum_div_dimshuffle_bug": "0.3", "subtensor_merge_bug": "0.5", "gpu_set_subtensor1": "0.6",
    "signal_conv2d_interface": "0.7", "reduce_join": "0.7", "inc_set_subtensor1": "0.7",
    "round": "0.9", "inc_subtensor1_opt": "0.10", "identify_1pexp_bug": "0.4.1",
}
_BUG_VERSIONS = ("None", "all", "0.3", "0.4", "0.4.1", "0.5", "0.6", "0.7", "0.8", "0.8.1",
                 "0.8.2", "0.9", "0.10", "1.0", "1.0.1", "1.0.2", "1.0.3", "1.0.4", "1.0.5")


def _fixed_after(version: str, ignore_before: str = "0.9") -> bool:
    """Theano's ``warn_default``: whether a bug fixed in ``version`` is warned about."""
    if ignore_before in ("None", "all"):
        return ignore_before == "None"
    as_tuple = lambda v: tuple(int(p) for p in v.split("."))  # noqa: E731
    return as_tuple(ignore_before) < as_tuple(version)


WARN_FLAGS: tuple = (
    Flag("warn.ignore_bug_before", "0.9", _enum(*_BUG_VERSIONS),
         "Theano bugs fixed in this version or before are not warned about (accepted; no effect)"),
    Flag("warn.vm_gc_bug", False, _bool, "accepted for Theano compatibility; no effect"),
    *(Flag(f"warn.{name}", _fixed_after(version), _bool,
           f"warn about a Theano bug fixed in {version} (accepted for compatibility; no effect)")
      for name, version in _THEANO_BUG_FLAGS.items()),
)

# Mode names function() knows or may know (it says which of them this installation has).
MODES = ("FAST_RUN", "FAST_COMPILE", "INTERP", "DebugMode", "DEBUG_MODE", "ProfileMode", "Mode")

FLAGS: tuple[Flag, ...] = (
    Flag("floatX", "float64", _enum("float64", "float32", "float16"),
         "dtype of T.matrix() & co. when none is given, and of Python float constants"),
    Flag("device", "cpu", _device, "where computations run: cpu, or cuda/cudaN for an NVIDIA GPU"),
    Flag("init_gpu_device", "", lambda v: "" if v == "" else _device(v),
         "a GPU to initialize without moving computations to it"),
    Flag("force_device", False, _bool, "fail instead of falling back to the CPU if the device is missing"),
    Flag("contexts", "", _contexts, "named GPU contexts: dev0->cuda0;dev1->cuda1"),
    Flag("print_active_device", True, _bool, "print the device in use when it is initialized"),
    Flag("mode", "FAST_RUN", _enum(*MODES), "default compilation mode of function()"),
    Flag("optimizer", "fast_run", _enum("fast_run", "fast_compile", "merge", "None"),
         "which graph optimizations run"),
    Flag("optimizer_excluding", "", _optimizer_list, "optimization stages to skip, ':'-separated"),
    Flag("optimizer_including", "", _optimizer_list, "optimization stages to add, ':'-separated"),
    Flag("optimizer_requiring", "", _optimizer_list, "optimization stages that must run"),
    Flag("on_unused_input", "raise", _enum("raise", "warn", "ignore"),
         "what function() does with an input that no output needs"),
    Flag("profile", False, _bool, "profile every function and print the tables at exit"),
    Flag("profile_optimizer", False, _bool, "also profile the optimization passes"),
    Flag("profile_memory", False, _bool, "also report memory use in profiles"),
    Flag("profiling.n_apply", 20, _int, "rows of the Apply table (and of the memory table)"),
    Flag("profiling.n_ops", 20, _int, "rows of the Class and Ops tables of profiles"),
    Flag("profiling.min_memory_size", 1024, _int,
         "memory table of profiles: leave out nodes whose results take fewer bytes"),
    Flag("profiling.destination", "stderr", _str,
         "where profiles are printed at exit: stderr, stdout or a file name"),
    Flag("profiling.trace", "", _str,
         "write a Chrome trace (Perfetto, chrome://tracing) of profiled calls to this file"),
    Flag("allow_gc", True, _bool, "free intermediate buffers after each call"),
    Flag("compute_test_value", "off", _enum("off", "ignore", "warn", "raise", "pdb"),
         "evaluate test values (x.tag.test_value) while the graph is built"),
    Flag("cast_policy", "custom", _enum("custom", "numpy+floatX"),
         "how Python scalars and mixed dtypes are cast in elementwise operations"),
    Flag("print_test_value", False, _bool,
         "repr() of a variable also shows its test value (x.tag.test_value), when it has one"),
    *WARN_FLAGS,
    Flag("warn_float64", "ignore", _enum("ignore", "warn", "raise", "pdb"),
         "what to do when a float64 variable is created"),
    Flag("cache", True, _bool, "keep compiled code in the on-disk cache"),
    Flag("cache_dir", FromEnviron(default_cache_dir), _cache_dir,
         "directory of the on-disk cache (default: $LOWERING_CACHE_DIR, else ~/.cache/lowering)"),
    Flag("cache_max_bytes", 1 << 30, _byte_size,
         "bound on the on-disk cache's size, e.g. 512M or 2G (least recently used entries go "
         "first; 0: no bound)"),
    Flag("exception_verbosity", "low", _enum("low", "high"), "how much run-time errors print"),
    Flag("traceback.limit", 8, _int, "stack frames kept with each op's creation site"),
    Flag("cpu_features", "", _feature_string,
         "LLVM features of CPU code, on top of the CPU model's own (e.g. -avx512f:-avx2; "
         "empty: every feature the host reports)"),
    Flag("openmp", True, _bool, "run large loops on all cores"),
    Flag("cpu_threads", 0, _nonnegative_int,
         "threads a large loop runs on (0: every core this process may use)"),
    Flag("openmp_elemwise_minsize", 200000, _int,
         "smallest elementwise size that runs in parallel"),
    Flag("blas.ldflags", "", _str, "link flags of the BLAS to call (empty: NumPy's own)"),
    Flag("gpuarray.preallocate", 0.0, _float, "fraction of GPU memory to reserve at start"),
    Flag("gpuarray.sync", False, _bool, "wait for each GPU call to finish (for timing and errors)"),
    Flag("gpuarray.simulate", False, _bool,
         "run GPU kernels in the reference interpreter, for tests (device=cuda without a GPU)"),
    Flag("gpuarray.arch", "sm_90", _gpu_arch,
         "GPU architecture PTX is generated for when no GPU is present to ask (sm_80, sm_90, ...)"),
    Flag("nvcc.fastmath", False, _bool, "use fast, less precise division, sqrt and denormals on GPU"),
    Flag("nvcc.flags", "", _str, "extra flags for the GPU code generator (e.g. --use_fast_math)"),
    Flag("deterministic", "default", _enum("default", "more"),
         "prefer deterministic implementations over faster ones"),
)


class _Section:
    """``config.gpuarray``: attribute access to the flags named ``gpuarray.*``."""

    def __init__(self, cfg: "Config", prefix: str):
        object.__setattr__(self, "_cfg", cfg)
        object.__setattr__(self, "_prefix", prefix)

    def __getattr__(self, name):
        return self._cfg[f"{self._prefix}.{name}"]

    def __setattr__(self, name, value):
        self._cfg[f"{self._prefix}.{name}"] = value


class Config:
    """The flags, as attributes. Values are checked when set; ``change_flags`` sets some for a while.

    >>> c = Config(environ={"THEANO_FLAGS": "floatX=float32,device=cpu"})
    >>> c.floatX, c.device
    ('float32', 'cpu')
    """

    def __init__(self, flags=FLAGS, environ=None):
        object.__setattr__(self, "_flags", {f.name: f for f in flags})
        environ = os.environ if environ is None else environ
        object.__setattr__(self, "_values", {
            f.name: f.default.compute(environ) if isinstance(f.default, FromEnviron) else f.default
            for f in flags})
        object.__setattr__(self, "_sections", {f.name.split(".")[0] for f in flags if "." in f.name})
        for var in ("THEANO_FLAGS", "LOWERING_FLAGS"):
            for name, value in parse_flags_string(environ.get(var, ""), var):
                self._set(name, value, origin=var)

    # -- access -------------------------------------------------------------------------------

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        if name in self._values:
            return self._values[name]
        if name in self._sections:
            return _Section(self, name)
        raise self._unknown(name)

    def __setattr__(self, name, value):
        self._set(name, value)

    def __getitem__(self, name):
        if name not in self._values:
            raise self._unknown(name)
        return self._values[name]

    def __setitem__(self, name, value):
        self._set(name, value)

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._values) | self._sections)

    def _set(self, name: str, value, origin: str = "") -> None:
        flag = self._flags.get(name)
        if flag is None:
            raise self._unknown(name, origin)
        try:
            self._values[name] = flag.parse(value)
        except ConfigError as exc:
            where = f" (in {origin})" if origin else ""
            raise ConfigError(f"bad value {value!r} for flag {name}{where}; {exc}") from None

    def _unknown(self, name: str, origin: str = "") -> UnknownFlagError:
        close = difflib.get_close_matches(name, list(self._values), n=3, cutoff=0.5)
        if not close:  # case slips such as floatx, MODE
            close = [n for n in self._values if n.lower() == name.lower()]
        hint = "; did you mean " + ", ".join(close) + "?" if close else ""
        where = f" in {origin}" if origin else ""
        return UnknownFlagError(f"unknown flag {name!r}{where}{hint}")

    # -- helpers ------------------------------------------------------------------------------

    def flags(self) -> dict[str, Flag]:
        """Every flag by name (with its default and documentation)."""
        return dict(self._flags)

    def context_devices(self) -> dict[str, str]:
        """The ``contexts`` flag parsed: context name → device (``{'dev0': 'cuda0'}``)."""
        return parse_contexts(self._values["contexts"])

    @contextlib.contextmanager
    def change_flags(self, flags: dict | None = None, **kw) -> Iterator["Config"]:
        """Set flags inside a ``with`` block (or a decorated function) and restore them after.

        Dotted flags go in ``flags``: ``change_flags({"gpuarray.sync": True}, floatX="float32")``.
        Every value is checked before any is set.

        >>> with config.change_flags(floatX="float32", allow_gc=False):
        ...     config.floatX, config.allow_gc
        ('float32', False)
        """
        changes = {**(flags or {}), **kw}
        probe = {}
        for name, value in changes.items():
            flag = self._flags.get(name)
            if flag is None:
                raise self._unknown(name)
            try:
                probe[name] = flag.parse(value)
            except ConfigError as exc:
                raise ConfigError(f"bad value {value!r} for flag {name}; {exc}") from None
        saved = {name: self._values[name] for name in probe}
        self._values.update(probe)
        try:
            yield self
        finally:
            self._values.update(saved)

    def __str__(self):
        return "\n".join(f"{name} = {value!r}" for name, value in sorted(self._values.items()))


def parse_flags_string(text: str, origin: str = "flags") -> list[tuple[str, str]]:
    """``"a=1,b=x"`` → ``[("a", "1"), ("b", "x")]``; empty entries are skipped.

    >>> parse_flags_string("mode=FAST_RUN,device=cpu,,floatX=float32")
    [('mode', 'FAST_RUN'), ('device', 'cpu'), ('floatX', 'float32')]
    """
    pairs = []
    for entry in text.split(","):
        entry = entry.strip()
        if not entry:
            continue
        name, eq, value = entry.partition("=")
        if not eq or not name.strip():
            raise ConfigError(f"malformed entry {entry!r} in {origin}; expected name=value")
        pairs.append((name.strip(), value.strip()))
    return pairs


config = Config()
change_flags = config.change_flags
