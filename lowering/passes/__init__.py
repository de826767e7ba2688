"""The passes, one module per pass, named like the pass (``fuse.py`` is ``fuse``).

Importing this package imports every module in it, which registers each pass by name in
``lowering.ir.passes.PASS_REGISTRY``; a new pass needs only its own module here.

>>> from lowering.ir.passes import PASS_REGISTRY
>>> {"canonicalize", "cse", "dce"} <= set(PASS_REGISTRY)
True
"""
import importlib
import pkgutil


def _import_all() -> None:
    for info in pkgutil.iter_modules(__path__):
        if not info.name.startswith("_"):
            importlib.import_module(f"{__name__}.{info.name}")


_import_all()
