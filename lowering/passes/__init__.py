"""The passes, one module per pass, named like the pass (``fuse.py`` is ``fuse``); the passes of
one stage that need several modules have a folder (``bufferize/``, ``gpu/``).

Importing this package imports every module in it and in its folders, which registers each pass
by name in ``lowering.ir.passes.PASS_REGISTRY``; a new pass needs only its own module here.

>>> from lowering.ir.passes import PASS_REGISTRY
>>> {"canonicalize", "cse", "dce"} <= set(PASS_REGISTRY)
True
"""
import importlib
import pkgutil


def _import_all() -> None:
    # Sub-packages too: a pass may live in a folder of modules that share one stage.
    for info in pkgutil.walk_packages(__path__, f"{__name__}."):
        if not info.name.rpartition(".")[2].startswith("_"):
            importlib.import_module(info.name)


_import_all()
