"""Theano's lists of dtype names (``T.float_dtypes``, ``T.int_dtypes``, ...) and its tuples of
scalar, vector and matrix types by kind (``T.float_matrix_types``, ...).

>>> float_dtypes, discrete_dtypes[:2]
(['float16', 'float32', 'float64'], ['bool', 'int8'])
>>> import lowering.tensor as T
>>> T.dmatrix in float_matrix_types
True
"""
from __future__ import annotations

from . import constructors as _c

int_dtypes = ["int8", "int16", "int32", "int64"]
uint_dtypes = ["uint8", "uint16", "uint32", "uint64"]
float_dtypes = ["float16", "float32", "float64"]
complex_dtypes = ["complex64", "complex128"]
integer_dtypes = int_dtypes + uint_dtypes
discrete_dtypes = ["bool"] + integer_dtypes
continuous_dtypes = float_dtypes + complex_dtypes
all_dtypes = discrete_dtypes + continuous_dtypes

int_types = (_c.bscalar, _c.wscalar, _c.iscalar, _c.lscalar)
float_types = (_c.fscalar, _c.dscalar)
complex_types = (_c.cscalar, _c.zscalar)
int_scalar_types = int_types
float_scalar_types = float_types
complex_scalar_types = complex_types
int_vector_types = (_c.bvector, _c.wvector, _c.ivector, _c.lvector)
float_vector_types = (_c.fvector, _c.dvector)
complex_vector_types = (_c.cvector, _c.zvector)
int_matrix_types = (_c.bmatrix, _c.wmatrix, _c.imatrix, _c.lmatrix)
float_matrix_types = (_c.fmatrix, _c.dmatrix)
complex_matrix_types = (_c.cmatrix, _c.zmatrix)

__all__ = ["int_dtypes", "uint_dtypes", "float_dtypes", "complex_dtypes", "integer_dtypes",
           "discrete_dtypes", "continuous_dtypes", "all_dtypes", "int_types", "float_types",
           "complex_types", "int_scalar_types", "float_scalar_types", "complex_scalar_types",
           "int_vector_types", "float_vector_types", "complex_vector_types", "int_matrix_types",
           "float_matrix_types", "complex_matrix_types"]
