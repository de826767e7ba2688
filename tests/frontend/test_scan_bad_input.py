"""Bad input to ``theano.scan``: each error names the argument and the user's line (a line of
this file), at build time where the information exists, at call time otherwise, and a failed
call changes no shared variable."""
import os

import numpy as np
import pytest

import lowering as theano
import lowering.tensor as T
from lowering.frontend.errors import GraphBuildError, GraphTypeError

HERE = os.path.basename(__file__)
MODES = ["INTERP", "FAST_RUN"]


def test_fn_returning_more_outputs_than_outputs_info():
    x = T.dvector("x")
    with pytest.raises(GraphBuildError, match=rf"{HERE}:\d+: scan: fn returned 2 outputs but "
                                              r"outputs_info has 1 entry"):
        theano.scan(lambda v, h: [h + v, v], sequences=x, outputs_info=T.constant(0.0))


def test_fn_returning_an_output_of_another_dtype_than_its_initial_state():
    x = T.fvector("x")
    with pytest.raises(GraphTypeError, match=rf"{HERE}:\d+: scan: output #0 of fn has dtype "
                                             r"float64, but its initial value outputs_info\[0\] "
                                             r"has dtype float32"):
        theano.scan(lambda v, h: h + T.cast(v, "float64"), sequences=x,
                    outputs_info=T.constant(np.float32(0)))


def test_fn_returning_an_output_of_another_rank_than_its_initial_state():
    x = T.dmatrix("x")
    with pytest.raises(GraphTypeError, match=r"output #0 of fn has 1 dimensions, but its "
                                             r"initial value outputs_info\[0\] gives steps of 0"):
        theano.scan(lambda v, h: v + h, sequences=x, outputs_info=T.constant(0.0))


def test_fn_returning_something_that_is_not_a_tensor():
    x = T.dvector("x")
    with pytest.raises(GraphTypeError, match=r"output #0 of fn must be a tensor"):
        theano.scan(lambda v: "nope", sequences=x)


def test_fn_taking_another_number_of_arguments():
    x = T.dvector("x")
    with pytest.raises(GraphTypeError, match=rf"{HERE}:\d+: scan: fn takes 1 positional "
                                             r"argument but scan passes 2"):
        theano.scan(lambda v: v, sequences=x, outputs_info=T.constant(0.0))


def test_taps_not_matching_outputs_info():
    x = T.dvector("x")
    with pytest.raises(GraphBuildError, match=r"outputs_info\[0\] reads 2 steps back \(taps "
                                              r"\[-2, -1\]\), so its initial value needs a first "
                                              r"dimension"):
        theano.scan(lambda v, a, b: a + b + v, sequences=x,
                    outputs_info={"initial": T.constant(0.0), "taps": [-2, -1]})
    with pytest.raises(GraphBuildError, match=r"outputs_info\[0\] reads 3 steps back .* has 2 "
                                              r"rows"):
        theano.scan(lambda v, a: a + v, sequences=x,
                    outputs_info={"initial": T.constant(np.zeros(2)), "taps": [-3]})
    with pytest.raises(GraphBuildError, match=r"outputs_info\[0\] has taps \[1\]; the taps of an "
                                              r"output are a non-empty list of negative"):
        theano.scan(lambda v, a: a + v, sequences=x,
                    outputs_info={"initial": T.constant(0.0), "taps": [1]})
    with pytest.raises(GraphBuildError, match=r"outputs_info\[0\] has taps \[-1\] but no "
                                              r"'initial' value"):
        theano.scan(lambda v: v, sequences=x, outputs_info={"taps": [-1]})


@pytest.mark.parametrize("mode", MODES)
def test_taps_needing_more_initial_rows_than_given_at_call_time(mode):
    x, init = T.dvector("x"), T.dvector("init")
    y, _ = theano.scan(lambda v, a, b: a + b + v, sequences=x,
                       outputs_info={"initial": init, "taps": [-2, -1]})
    f = theano.function([x, init], y, mode=mode)
    with pytest.raises(Exception, match=rf"tensor.scan at \S*{HERE}:\d+.*outputs_info\[0\]"):
        f(np.ones(3), np.ones(1))


def test_negative_n_steps_at_build_time():
    with pytest.raises(GraphBuildError, match=rf"{HERE}:\d+: scan: n_steps is -2; it must be at "
                                              r"least 0"):
        theano.scan(lambda h: h * 2, outputs_info=T.constant(1.0), n_steps=-2)


def test_n_steps_longer_than_a_sequence_of_known_length():
    x = T.constant(np.arange(3.0))
    with pytest.raises(GraphBuildError, match=r"n_steps is 5 but sequences\[0\] has 3 rows"):
        theano.scan(lambda v: v, sequences=x, n_steps=5)


def test_no_sequences_and_no_n_steps():
    with pytest.raises(GraphBuildError, match=r"n_steps is needed when there are no sequences"):
        theano.scan(lambda h: h * 2, outputs_info=T.constant(1.0))


@pytest.mark.parametrize("mode", MODES)
def test_negative_n_steps_at_call_time_leaves_shared_state_unchanged(mode):
    counter = theano.shared(np.float64(5), name="counter")
    k = T.lscalar("k")
    out, updates = theano.scan(lambda h: (h * 2, {counter: counter + 1}),
                               outputs_info=T.constant(1.0), n_steps=k)
    f = theano.function([k], out, updates=updates, mode=mode)
    with pytest.raises(Exception, match=rf"tensor.scan at \S*{HERE}:\d+.*n_steps"):
        f(-1)
    assert counter.get_value() == 5
    np.testing.assert_allclose(f(2), [2, 4])
    assert counter.get_value() == 7


@pytest.mark.parametrize("mode", MODES)
def test_n_steps_longer_than_a_sequence_at_call_time(mode):
    x, k = T.dvector("x"), T.lscalar("k")
    out, _ = theano.scan(lambda v: v + 1, sequences=x, n_steps=k)
    f = theano.function([x, k], out, mode=mode)
    np.testing.assert_allclose(f(np.arange(4.0), 2), [1, 2])
    with pytest.raises(Exception, match=rf"tensor.scan at \S*{HERE}:\d+.*sequences\[0\]"):
        f(np.arange(4.0), 6)


def test_bad_argument_forms():
    x = T.dvector("x")
    with pytest.raises(GraphBuildError, match=r"sequences\[0\] must be a tensor or a dict"):
        theano.scan(lambda v: v, sequences=[{"inpt": x}])
    with pytest.raises(GraphTypeError, match=r"sequences\[0\] .* is a scalar"):
        theano.scan(lambda v: v, sequences=[T.dscalar("s")])
    with pytest.raises(GraphBuildError, match=r"truncate_gradient must be -1"):
        theano.scan(lambda v: v, sequences=x, truncate_gradient=0)
    with pytest.raises(GraphTypeError, match=r"fn must be callable"):
        theano.scan(None, sequences=x)


def test_strict_requires_every_shared_variable_in_non_sequences():
    # Theano's strict=True: shared variables must be passed; other outside values may be used.
    x, scale = T.dvector("x"), T.dscalar("scale")
    w = theano.shared(np.float64(2.0), name="w")
    with pytest.raises(GraphBuildError, match=r"strict=True, but fn uses the shared variable\(s\) "
                                              r"w without them being in non_sequences"):
        theano.scan(lambda v: v * w, sequences=x, strict=True)
    out, _ = theano.scan(lambda v, w: v * w * scale, sequences=x, non_sequences=w, strict=True)
    f = theano.function([x, scale], out)
    np.testing.assert_allclose(f(np.array([1.0, 2.0]), 3.0), [6.0, 12.0])
