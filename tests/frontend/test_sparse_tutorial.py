"""The examples of Theano's sparse tutorial (``doc/tutorial/sparse.txt``), with only the imports
changed, print what the tutorial shows (NumPy's 1.13 printing, which the tutorial was written
with)."""
import doctest

import numpy as np
import pytest

pytest.importorskip("scipy.sparse")

TUTORIAL = """
>>> import lowering as theano
>>> import numpy as np
>>> import scipy.sparse as sp
>>> from lowering import sparse

>>> x = sparse.csc_matrix(name='x', dtype='float32')
>>> y = sparse.dense_from_sparse(x)
>>> z = sparse.csc_from_dense(y)

>>> x = sparse.csc_matrix(name='x', dtype='int64')
>>> data, indices, indptr, shape = sparse.csm_properties(x)
>>> y = sparse.CSR(data, indices, indptr, shape)
>>> f = theano.function([x], y)
>>> a = sp.csc_matrix(np.asarray([[0, 1, 1], [0, 0, 0], [1, 0, 0]]))
>>> print(a.toarray())
[[0 1 1]
 [0 0 0]
 [1 0 0]]
>>> print(f(a).toarray())
[[0 0 1]
 [1 0 0]
 [1 0 0]]

>>> x = sparse.csc_matrix(name='x', dtype='float32')
>>> y = sparse.structured_add(x, 2)
>>> f = theano.function([x], y)
>>> a = sp.csc_matrix(np.asarray([[0, 0, -1], [0, -2, 1], [3, 0, 0]], dtype='float32'))
>>> print(a.toarray())
[[ 0.  0. -1.]
 [ 0. -2.  1.]
 [ 3.  0.  0.]]
>>> print(f(a).toarray())
[[ 0.  0.  1.]
 [ 0.  0.  3.]
 [ 5.  0.  0.]]
"""


def test_the_sparse_tutorial_runs_as_written():
    test = doctest.DocTestParser().get_doctest(TUTORIAL, {}, "sparse tutorial", None, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    printing = np.get_printoptions()
    np.set_printoptions(legacy="1.13")
    try:
        result = runner.run(test)
    finally:
        np.set_printoptions(**printing)
    assert result.failed == 0 and result.attempted == 20
