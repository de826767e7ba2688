"""``T.mgrid`` and ``T.ogrid``: NumPy's index grids as symbolic tensors (Theano's ``_nd_grid``).

``T.mgrid[0:5, 0:3]`` is a list of two 5 x 3 matrices (the first counts rows, the second
columns); ``T.ogrid[0:5, 0:3]`` the open form, a 5 x 1 column and a 1 x 3 row that broadcast
to the same grid. Bounds may be symbolic scalars.

>>> import lowering.tensor as T
>>> rows, cols = T.mgrid[0:3, 0:2]
>>> rows.eval().tolist(), cols.eval().tolist()
([[0, 0], [1, 1], [2, 2]], [[0, 1], [0, 1], [0, 1]])
>>> [g.broadcastable for g in T.ogrid[0:3, 0:2]]
[(False, True), (True, False)]
"""
from __future__ import annotations

from .shapes import arange, ones_like, reshape
from .variable import TensorVariable


class NdGrid:
    """Index it with slices to get one grid per slice: dense (``mgrid``) or open (``ogrid``,
    ``sparse=True``), each axis ``arange(start or 0, stop, step or 1)``."""

    def __init__(self, sparse: bool = False):
        self.sparse = sparse

    def __getitem__(self, slices) -> list[TensorVariable]:
        slices = slices if isinstance(slices, tuple) else (slices,)
        for s in slices:
            if not isinstance(s, slice):
                raise TypeError(f"{self._name()} is indexed with slices (start:stop:step), got "
                                f"{s!r}")
            if isinstance(s.step, complex):
                raise NotImplementedError("Not implemented for slices whose step is complex")
        ndim = len(slices)
        ranges = [arange(s.start or 0, s.stop, s.step or 1) for s in slices]
        ranges = [reshape(r, [1] * axis + [r.shape[0]] + [1] * (ndim - 1 - axis))
                  for axis, r in enumerate(ranges)]
        if self.sparse:
            return ranges
        ones = [ones_like(r) for r in ranges]
        grids = []
        for axis in range(ndim):
            grid = ranges[axis]
            for other in range(ndim):
                if other != axis:
                    grid = grid * ones[other]
            grids.append(grid)
        return grids

    def _name(self) -> str:
        return "ogrid" if self.sparse else "mgrid"

    def __repr__(self):
        return f"T.{self._name()}"


mgrid = NdGrid()
ogrid = NdGrid(sparse=True)
