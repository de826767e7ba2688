"""``theano.scan_module``: ``scan``, ``until`` and the views of scan, as Theano programs import
them (``from theano.scan_module import until``).

>>> import lowering.scan_module as scan_module
>>> scan_module.scan is scan
True
"""
from lowering.frontend.scan import foldl, foldr, map, reduce, scan, until  # noqa: F401,A004

__all__ = ["scan", "until", "map", "reduce", "foldl", "foldr"]

from lowering.unsupported import mirror_getattr  # noqa: E402

from . import scan_utils  # noqa: F401,E402

__getattr__ = mirror_getattr(__name__)
