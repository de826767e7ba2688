"""Modes and the compilation pipeline behind ``function()``.

A function's IR goes through named stages (docs/architecture.md)::

    tensor     the module as built from the user's graph
    optimized  after the mode's graph optimizations (canonicalize, cse, stabilize, specialize, fuse,
               inplace, in Theano's order; each one runs once its pass exists)
    loops, gpu, llvm, ptx, asm   produced by backends that register them (``register_stage``)

and is then run by an **executor**: the reference interpreter, or a backend registered with
``register_executor``. A ``Mode`` names its optimizations and the executors it prefers, first
available first, so a backend plugs in by registering itself; nothing else changes::

    register_executor("cpu", lambda module: CompiledModule(module))
    register_stage("loops", "optimized", lambda module: lower_to_loops(module))

>>> get_mode("INTERP").optimizations, get_mode("INTERP").executors
((), ('interpreter',))
>>> get_mode("FAST_RUN").excluding("fuse").optimizations
('canonicalize', 'cse', 'stabilize', 'specialize', 'inplace')
>>> Mode(linker="vm", optimizer="fast_compile").executors, Mode(linker="py").executors
(('cpu', 'interpreter'), ('interpreter',))
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable

from lowering.ir.core import Operation, did_you_mean

# Graph optimizations in the order Theano and PyTensor apply them.
OPTIMIZATION_ORDER = ("canonicalize", "cse", "stabilize", "specialize", "fuse", "inplace")

STAGES = ("tensor", "optimized", "loops", "gpu", "llvm", "ptx", "asm")


@dataclass(frozen=True)
class Mode:
    """How ``function()`` compiles: graph optimizations (pass names) and executors by preference."""

    name: str = "Mode"
    optimizations: tuple[str, ...] = ()
    executors: tuple[str, ...] = ("interpreter",)
    check_passes: bool = False  # interpret the IR after every pass on each call and compare
    # Theano's ``Mode(linker=..., optimizer=...)``: given either, the mode takes the
    # optimizer's passes (``config.optimizer`` by default) and the linker's executors.
    linker: str | None = None
    optimizer: str | None = None

    def __post_init__(self):
        if self.linker is None and self.optimizer is None:
            return
        from lowering.config import config
        optimizer = config.optimizer if self.optimizer in (None, "default") else self.optimizer
        if optimizer not in _OPTIMIZER_FLAG:
            raise ModeError(f"Mode: unknown optimizer {optimizer!r}; known: "
                            f"{', '.join(map(repr, _OPTIMIZER_FLAG))}")
        linker = self.linker or "cvm"
        if linker not in _LINKERS:
            raise ModeError(f"Mode: unknown linker {linker!r}; known: "
                            f"{', '.join(map(repr, _LINKERS))}")
        object.__setattr__(self, "optimizations", _OPTIMIZER_FLAG[optimizer])
        object.__setattr__(self, "executors", _LINKERS[linker])

    def excluding(self, *names: str) -> "Mode":
        """This mode without the named optimizations (Theano's ``mode.excluding('fuse')``)."""
        return replace(self, optimizations=tuple(o for o in self.optimizations if o not in names))

    def including(self, *names: str) -> "Mode":
        """This mode with the named optimizations added, in their usual place in the order."""
        wanted = set(self.optimizations) | set(names)
        ordered = [o for o in OPTIMIZATION_ORDER if o in wanted]
        return replace(self, optimizations=tuple(ordered + [n for n in self.optimizations + names
                                                            if n not in OPTIMIZATION_ORDER]))


PREDEFINED_MODES = {
    "FAST_RUN": Mode("FAST_RUN", OPTIMIZATION_ORDER, ("cpu", "interpreter")),
    "FAST_COMPILE": Mode("FAST_COMPILE", ("canonicalize",), ("cpu", "interpreter")),
    "INTERP": Mode("INTERP", (), ("interpreter",)),
    "DebugMode": Mode("DebugMode", OPTIMIZATION_ORDER, ("interpreter",), check_passes=True),
    # FAST_RUN with profiling (function() profiles in this mode; see compile.profiling).
    "ProfileMode": Mode("ProfileMode", OPTIMIZATION_ORDER, ("cpu", "interpreter")),
}
_ALIASES = {"DEBUG_MODE": "DebugMode"}

# config.optimizer values for the generic mode "Mode" (Theano's default mode object).
_OPTIMIZER_FLAG = {"fast_run": OPTIMIZATION_ORDER, "fast_compile": ("canonicalize",),
                   "merge": ("cse",), "None": ()}
# Theano's linkers: the Python one runs the interpreter; the others compiled code (every
# executor here evaluates lazily: an ifelse runs one branch whatever the linker).
_LINKERS = {"py": ("interpreter",), **{name: ("cpu", "interpreter") for name in
                                       ("c", "c|py", "c|py_nogc", "vm", "vm_nogc", "cvm",
                                        "cvm_nogc")}}


class ModeError(ValueError):
    """An unknown mode or an optimization that is required but does not exist."""


def get_mode(mode: "str | Mode | None" = None) -> Mode:
    """The Mode for ``function(mode=...)``: a Mode, a mode name, or None for ``config.mode``.

    The flags ``optimizer_excluding``, ``optimizer_including`` and ``optimizer_requiring``
    (``:``-separated pass names) adjust the mode's optimizations.
    """
    from lowering.config import config
    if isinstance(mode, Mode):
        chosen = mode
    else:
        name = config.mode if mode is None else mode
        name = _ALIASES.get(name, name)
        if name == "Mode":
            chosen = Mode("Mode", _OPTIMIZER_FLAG[config.optimizer], ("cpu", "interpreter"))
        elif name in PREDEFINED_MODES:
            chosen = PREDEFINED_MODES[name]
        else:
            known = list(PREDEFINED_MODES) + ["Mode"]
            raise ModeError(f"unknown or unavailable mode {name!r}{did_you_mean(str(name), known)};"
                            f" available modes: {', '.join(known)}")
    excluded = _names(config.optimizer_excluding)
    included = _names(config.optimizer_including) + _names(config.optimizer_requiring)
    chosen = chosen.excluding(*excluded).including(*included) if excluded or included else chosen
    missing = [n for n in _names(config.optimizer_requiring) if n not in available_passes()]
    if missing:
        raise ModeError(f"optimizer_requiring names optimizations that do not exist: "
                        f"{', '.join(missing)}")
    return chosen


def _names(flag: str) -> tuple[str, ...]:
    return tuple(n for n in flag.split(":") if n)


def available_passes() -> set[str]:
    """Names of the passes that exist (importing the passes package registers them)."""
    import lowering.passes  # noqa: F401  (registers every pass)
    from lowering.ir.passes import PASS_REGISTRY
    return set(PASS_REGISTRY)


def optimization_pipeline(mode: Mode) -> tuple[str, list[str]]:
    """The pipeline text of the mode's optimizations that exist, and the names of those that do
    not exist yet (they are reported, never pretended)."""
    have = available_passes()
    run = [n for n in mode.optimizations if n in have]
    return ",".join(run), [n for n in mode.optimizations if n not in have]


def optimize(module: Operation, pipeline: str, instrumentations=()) -> None:
    """Run the optimization pipeline on ``module`` in place (verifying after each pass)."""
    if pipeline:
        from lowering.ir.pass_manager import PassManager
        PassManager(pipeline, instrumentations=instrumentations).run(module)


# ---------------------------------------------------------------------------------------------
# Executors

Executor = Callable[[list], list]
ExecutorFactory = Callable[[Operation], Executor]
EXECUTORS: dict[str, ExecutorFactory] = {}


EXECUTOR_CHECKS: dict[str, Callable[[], None]] = {}


def register_executor(name: str, factory: ExecutorFactory,
                      check: Callable[[], None] | None = None) -> None:
    """Make ``name`` available to modes: ``factory(module)`` returns a callable that takes the
    argument arrays of the module's single function and returns its result arrays. ``check()``,
    when given, raises an error saying what is missing when the executor cannot run here."""
    EXECUTORS[name] = factory
    if check is not None:
        EXECUTOR_CHECKS[name] = check


def choose_executor(mode: Mode) -> tuple[str, ExecutorFactory]:
    """The first of the mode's executors that is registered; with ``device=cuda*`` the GPU
    executor comes first. A GPU that cannot be used is an error saying what is missing (the
    check registered with the executor, ``CudaUnavailableError``), never a silent CPU run; with
    ``force_device`` a mode that would not run on the GPU (``INTERP``) is an error too."""
    from lowering.config import config
    preferred = mode.executors
    if config.device.startswith(("cuda", "gpu")):
        if mode.name == "INTERP":
            if config.force_device:
                raise ModeError(f"device={config.device} with force_device: mode INTERP runs "
                                f"functions in the interpreter, not on the GPU")
        else:
            if "gpu" not in EXECUTORS:
                raise ModeError(f"device={config.device} asks for the GPU, but the GPU backend "
                                f"is not available in this installation")
            check = EXECUTOR_CHECKS.get("gpu")
            if check is not None:
                check()
            preferred = ("gpu",) + preferred
    for name in preferred:
        if name in EXECUTORS:
            return name, EXECUTORS[name]
    raise ModeError(f"mode {mode.name} can run on {', '.join(mode.executors)}, and none of them "
                    f"is available")


# ---------------------------------------------------------------------------------------------
# Stages after "optimized"

StageProducer = Callable[[Operation], "Operation | str"]
_STAGE_PRODUCERS: dict[str, tuple[str, StageProducer]] = {}

# What produces each later stage, for the error given while it is missing.
_STAGE_OWNERS = {
    "loops": "the bufferize pass (tensor -> loops)",
    "gpu": "the GPU backend (map-to-gpu, outline-kernels; device=cuda)",
    "llvm": "the CPU backend (to-llvm)",
    "ptx": "the GPU backend (NVPTX emission)",
    "asm": "the CPU backend (machine code)",
}


class StageUnavailableError(LookupError):
    """``Function.ir(stage)`` for a stage that nothing in this installation produces yet."""


def register_stage(name: str, source: str, produce: StageProducer) -> None:
    """Let ``Function.ir(name)`` exist: ``produce`` makes it from a copy of stage ``source``'s
    module, returning a module (an IR stage) or text (``llvm``, ``ptx``, ``asm``)."""
    if name not in STAGES:
        raise ValueError(f"unknown stage {name!r}; stages: {', '.join(STAGES)}")
    _STAGE_PRODUCERS[name] = (source, produce)


def stage_producer(name: str) -> tuple[str, StageProducer]:
    """The source stage and producer of stage ``name``, or a clear error if it has none."""
    if name not in STAGES:
        raise ValueError(f"unknown IR stage {name!r}{did_you_mean(str(name), STAGES)}; "
                         f"stages: {', '.join(STAGES)}")
    if name not in _STAGE_PRODUCERS:
        ready = ["tensor", "optimized"] + [s for s in STAGES if s in _STAGE_PRODUCERS]
        raise StageUnavailableError(
            f"IR stage {name!r} is produced by {_STAGE_OWNERS[name]}, which is not available "
            f"in this installation; available stages: {', '.join(ready)}")
    return _STAGE_PRODUCERS[name]
