"""The optimized graph of a function, from the disk cache: a warm ``function()`` skips the graph
optimizations as well as the code generation.

The graph optimizations (canonicalize, stabilize, fuse, ...) are deterministic: their result is
a function of the module as built from the user's graph, the mode's optimizations and the
compiler's code. ``optimize_with_cache`` keys the disk cache (``cache.DiskCache``, the flags
``cache`` and ``cache_dir``) on exactly that:

- the module's text with locations (they are in error messages, so they are part of the result),
- the names of the optimizations the mode asks for (``Mode.optimizations``, after the
  ``optimizer_excluding``/``optimizer_including`` flags),
- ``cpu.build.compiler_fingerprint()`` (the package's version and source files: a new or
  changed pass is a different compiler),

and stores the optimized module's text with locations, with the pipeline that ran and the
optimizations that did not exist as metadata. A hit parses the text back (the IR prints and
parses without loss); nothing of ``lowering.passes`` is imported. The backend's own cache then
finds the machine code by the optimized module's text, as before.

Runs that watch the passes (instrumentations: the checking mode's snapshots, profiling's pass
timers) and a disabled cache go through the passes every time.

>>> from lowering.ir.parser import parse_module
>>> from lowering.compile.pipeline import get_mode
>>> module = parse_module('''
... func.func @f(%x: tensor<?xf64>) -> tensor<?xf64> {
...   %y = "tensor.neg"(%x) : (tensor<?xf64>) -> tensor<?xf64>
...   %z = "tensor.neg"(%y) : (tensor<?xf64>) -> tensor<?xf64>
...   func.return %z : tensor<?xf64>
... }''')
>>> optimized, pipeline, missing = optimize_with_cache(module, get_mode("FAST_RUN"))
>>> [op.name for op in optimized.functions[0].body.block.ops]
['func.return']
"""
from __future__ import annotations

from lowering.ir.core import Operation

from .cache import DiskCache
from .pipeline import Mode, optimization_pipeline, optimize

_KIND = "optimized graph"


def graph_key(module: Operation, mode: Mode) -> str:
    """The cache key of ``module`` optimized by ``mode``'s optimizations (see the module doc)."""
    from lowering.ir.printer import print_op
    from .cpu.build import compiler_fingerprint
    # Keys and stored modules use the generic form: it spells every op one way, and prints and
    # parses faster than the pretty forms, whose types are inferred.
    return DiskCache.key(print_op(module, generic=True, print_locations=True), _KIND,
                         f"{','.join(mode.optimizations)}|{compiler_fingerprint()}")


def optimize_with_cache(module: Operation, mode: Mode, instrumentations=(), keep_input=False
                        ) -> tuple[Operation, str, list[str]]:
    """``(optimized module, pipeline, missing optimizations)`` for ``module`` (the tensor-level
    module of a function) under ``mode``: parsed from the disk cache, or optimized and stored.
    The optimizations work in place (``module`` itself is returned), or with ``keep_input`` on
    a copy, leaving ``module`` as built: the copy is then made only on a miss."""
    from .cpu.build import open_cache
    cache = open_cache() if not instrumentations and mode.optimizations else None
    key = graph_key(module, mode) if cache is not None else None
    if cache is not None:
        found = _load(cache, key)
        if found is not None:
            _keep_argument_names(module, found[0])
            return found
    if keep_input:
        module = module.clone()
    pipeline, missing = optimization_pipeline(mode)
    optimize(module, pipeline, instrumentations)
    if cache is not None:
        from lowering.ir.printer import print_op
        cache.store(key, print_op(module, generic=True, print_locations=True).encode(),
                    {"kind": _KIND, "pipeline": pipeline, "missing": list(missing)})
    return module, pipeline, list(missing)


def _keep_argument_names(built: Operation, loaded: Operation) -> None:
    """Give the loaded functions' arguments the names (or the absence of names) they have in the
    module as built, so that unnamed inputs stay unnamed (the text names them ``%argN``)."""
    for old, new in zip(_functions(built), _functions(loaded)):
        for a, b in zip(old.regions[0].block.args, new.regions[0].block.args):
            b.name_hint = a.name_hint


def _functions(module: Operation) -> list[Operation]:
    return [op for op in module.regions[0].block.ops if op.regions]


def _load(cache: DiskCache, key: str):
    """The entry's module, pipeline and missing optimizations, or None (missing, corrupt, or
    not parseable by this version of the parser)."""
    from lowering.ir.core import IRError
    from lowering.ir.parser import parse_module
    entry = cache.load(key)
    if entry is None:
        return None
    text, meta = entry
    if meta.get("kind") != _KIND:
        return None
    try:
        module = parse_module(text.decode())
    except (IRError, UnicodeDecodeError, ValueError):
        return None
    return module, meta.get("pipeline", ""), list(meta.get("missing", []))
