"""Errors for Theano names that ``lowering`` does not have, raised where Theano's modules are mirrored.

The modules that stand for Theano's (``lowering.tensor`` for ``theano.tensor``,
``lowering.tensor.nnet`` for ``theano.tensor.nnet``, ...) answer a missing attribute with
``UnsupportedNameError``, an ``AttributeError`` (``hasattr`` and ``getattr(m, name, default)``
keep working), and a missing submodule with ``UnsupportedModuleError``, an ``ImportError``; both
messages name the Theano path and point to docs/compatibility.md, which lists Theano 1.0's public
names module by module, each marked supported or not.

>>> import types
>>> m = types.ModuleType("lowering.tensor.example")
>>> m.__getattr__ = mirror_getattr(m.__name__)
>>> m.__getattr__("bn")
Traceback (most recent call last):
...
lowering.unsupported.UnsupportedNameError: theano.tensor.example.bn is not supported by lowering (module 'lowering.tensor.example' has no attribute 'bn'); docs/compatibility.md lists Theano 1.0's public names, each marked supported or not
"""
from __future__ import annotations

import importlib.abc
import sys

# The modules whose missing names and submodules get these errors.
_MIRRORS: set[str] = set()
_GUIDE = "docs/compatibility.md lists Theano 1.0's public names, each marked supported or not"


class UnsupportedNameError(AttributeError):
    """A Theano name that ``lowering`` does not define (an ``AttributeError``)."""


class UnsupportedModuleError(ImportError):
    """A Theano module that ``lowering`` does not define (an ``ImportError``)."""


def theano_path(name: str) -> str:
    """The Theano spelling of a ``lowering`` module path.

    >>> theano_path("lowering.tensor.signal.pool")
    'theano.tensor.signal.pool'
    """
    head, _, rest = name.partition(".")
    return "theano" + ("." + rest if rest else "") if head == "lowering" else name


def mirror_getattr(module_name: str, forwarded: dict[str, str] | None = None):
    """A module ``__getattr__`` for ``module_name``, which mirrors a Theano module.

    ``forwarded`` maps names to the submodule (relative to ``module_name``) that defines them,
    read from ``sys.modules`` once it is loaded: a package below the front end in the layers
    offers names its front-end submodules define that way (``theano.compile.SharedVariable``).
    Any other name raises ``UnsupportedNameError``. The module's missing submodules raise
    ``UnsupportedModuleError`` once ``install_import_errors()`` has run.
    """
    _MIRRORS.add(module_name)
    forwarded = dict(forwarded or {})

    def __getattr__(name: str):
        source = forwarded.get(name)
        if source is not None:
            module = sys.modules.get(f"{module_name}.{source}")
            if module is not None:
                return getattr(module, name)
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(f"module {module_name!r} has no attribute {name!r}")
        raise UnsupportedNameError(
            f"{theano_path(module_name)}.{name} is not supported by lowering (module "
            f"{module_name!r} has no attribute {name!r}); {_GUIDE}", name=name)

    return __getattr__


class _MissingTheanoModuleFinder(importlib.abc.MetaPathFinder):
    """Last on ``sys.meta_path``: a submodule of a mirror that no other finder found is a
    Theano module ``lowering`` does not have."""

    def find_spec(self, fullname, path=None, target=None):
        parent = fullname.rpartition(".")[0]
        if parent in _MIRRORS:
            raise UnsupportedModuleError(
                f"{theano_path(fullname)} is not supported by lowering ({parent!r} has no "
                f"submodule or name {fullname.rpartition('.')[2]!r}); {_GUIDE}", name=fullname)
        return None


def install_import_errors() -> None:
    """Put the finder of missing Theano modules last on ``sys.meta_path`` (once)."""
    if not any(isinstance(f, _MissingTheanoModuleFinder) for f in sys.meta_path):
        sys.meta_path.append(_MissingTheanoModuleFinder())
