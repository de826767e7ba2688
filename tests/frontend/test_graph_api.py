"""Theano's graph API as libraries use it: the graph classes in isinstance checks, gof.graph's
walks and comparisons, theano.clone, and a small library-style program built on them."""
import numpy as np
import pytest

import lowering as theano
import lowering.tensor as T
from lowering.gof import graph


def test_variables_constants_nodes_and_shared_variables_are_theanos_classes():
    x = T.dmatrix("x")
    w = theano.shared(np.ones((2, 2)), name="w")
    y = T.dot(x, w) + 1
    for cls in (theano.Variable, T.Variable, theano.gof.Variable, theano.gof.graph.Variable):
        assert isinstance(x, cls) and isinstance(y, cls) and isinstance(w, cls)
    assert isinstance(T.constant(2.0), theano.gof.Constant)
    assert not isinstance(x, theano.gof.Constant)
    assert isinstance(w, theano.compile.SharedVariable)
    assert theano.compile.SharedVariable is theano.compile.sharedvalue.SharedVariable
    assert isinstance(y.owner, theano.gof.Apply) and y.owner == y.owner
    assert {y.owner, y.owner} == {y.owner}
    assert x.owner is None and w.owner is None


def test_gof_apply_builds_a_node_of_an_op_written_in_python():
    class Triple(theano.gof.Op):
        __props__ = ()

        def make_node(self, x):
            return theano.gof.Apply(self, [x], [x.type()])

        def perform(self, node, inputs, output_storage):
            output_storage[0][0] = inputs[0] * 3

    x = T.dvector("x")
    out = Triple()(x)
    assert isinstance(out.owner, theano.gof.Apply)
    np.testing.assert_allclose(theano.function([x], out)(np.array([1.0, 2.0])), [3.0, 6.0])


def test_inputs_and_ancestors_follow_theanos_depth_first_order():
    a, b = T.dscalar("a"), T.dscalar("b")
    c = theano.shared(2.0, name="c")
    y = a * c + b
    assert [v.name for v in graph.inputs([y]) if not isinstance(v, theano.gof.Constant)] == \
        ["a", "c", "b"]
    assert [v.name for v in graph.inputs([b, a])] == ["a", "b"]
    assert graph.ancestors([y])[0] is y
    assert set(graph.ancestors([y])) >= {a, b, c, y}
    blocked = a * c
    assert graph.inputs([blocked + b], blockers=[blocked]) == [b]
    assert blocked in graph.ancestors([blocked + b], blockers=[blocked])
    assert a not in graph.ancestors([blocked + b], blockers=[blocked])


def test_io_toposort_orders_the_nodes_between_inputs_and_outputs():
    x = T.dvector("x")
    h = T.exp(x)
    y = (h * 2).sum()
    nodes = graph.io_toposort([x], [y])
    assert nodes.index(h.owner) < nodes.index(y.owner)
    assert nodes[-1] == y.owner
    assert graph.io_toposort([h], [y])[0] != h.owner
    assert h.owner not in graph.io_toposort([h], [y])
    assert set(graph.variables([x], [y])) >= {x, h, y}


def test_equal_computations_and_is_same_graph_compare_structure():
    x, z = T.dvector("x"), T.dvector("z")
    assert graph.is_same_graph(T.exp(x) + 1, T.exp(x) + 1)
    assert not graph.is_same_graph(T.exp(x) + 1, T.exp(x) + 2)
    assert not graph.is_same_graph(T.exp(x), T.log(x))
    assert not graph.is_same_graph(x + 1, z + 1)
    assert graph.is_same_graph(x + 1, z + 1, givens={x: z})
    assert graph.equal_computations([x * 2, x], [x * 2, x])
    assert graph.equal_computations([x * 2], [z * 2], [x], [z])
    assert not graph.equal_computations([x.sum()], [x.mean()])
    from lowering.scan_module.scan_utils import equal_computations
    assert equal_computations is graph.equal_computations


def test_equal_computations_walks_graphs_deeper_than_the_recursion_limit():
    x = T.dscalar("x")
    a = b = x
    for _ in range(3000):
        a, b = a + 1, b + 1
    assert graph.equal_computations([a], [b])


def test_theano_clone_replaces_values_and_keeps_the_original():
    x, u = T.dvector("x"), T.dvector("u")
    w = theano.shared(np.array([1.0, 2.0]), name="w")
    xw = x * w
    y = xw.sum()
    y2 = theano.clone(y, replace={x: u})
    assert u in graph.inputs([y2]) and x not in graph.inputs([y2])
    assert w in graph.inputs([y2])  # share_inputs: the same shared variable
    assert y.eval({x: np.ones(2)}) == 3.0 and y2.eval({u: np.full(2, 2.0)}) == 6.0
    [y3] = theano.clone([y], replace=[(xw, u)])
    assert y3.eval({u: np.array([5.0, 7.0])}) == 12.0


def test_clone_without_sharing_inputs_copies_shared_variables_on_the_same_storage():
    w = theano.shared(np.array([1.0, 2.0]), name="w")
    copy = theano.clone(w, share_inputs=False)
    assert isinstance(copy, theano.compile.SharedVariable) and copy is not w
    assert copy.name == "w"
    copy.set_value(np.array([3.0, 4.0]))
    np.testing.assert_allclose(w.get_value(), [3.0, 4.0])
    x = T.dvector("x")
    y = theano.clone(x + w, share_inputs=False)
    leaves = graph.inputs([y])
    assert x not in leaves and w not in leaves
    assert any(isinstance(v, theano.compile.SharedVariable) for v in leaves)


def test_clone_refuses_a_replacement_of_another_type():
    x = T.dvector("x")
    with pytest.raises(TypeError, match="cannot be replaced by"):
        theano.clone(x * 2, replace={x: T.dmatrix("m")})
    with pytest.raises(TypeError, match="cannot be replaced by"):
        theano.clone(x * 2, replace={x: T.ivector("i")})


def test_gof_graph_clone_copies_inputs_and_outputs():
    x = T.dvector("x")
    y = T.exp(x) * 2
    [x2], [y2] = graph.clone([x], [y])
    assert x2 is not x and x2.name == "x" and x2 in graph.inputs([y2])
    np.testing.assert_allclose(theano.function([x2], y2)(np.zeros(2)), [2.0, 2.0])
    [x3], [y3] = graph.clone([x], [y], copy_inputs=False)
    assert x3 is x and y3 is not y and x in graph.inputs([y3])


def test_compile_function_module_names():
    from lowering.compile import function_module
    x = T.dvector("x")
    assert isinstance(theano.function([x], x * 2), function_module.Function)
    assert function_module.is_same_graph is graph.is_same_graph
    assert issubclass(function_module.UnusedInputError, Exception)


# -- a library-style program: layers, parameters found through the graph, a cloned output ----


class Dense:
    def __init__(self, incoming, n_in, n_out, rng, activation=T.tanh):
        self.incoming, self.activation = incoming, activation
        self.W = theano.shared(rng.standard_normal((n_in, n_out)) * 0.3, name="W")
        self.b = theano.shared(np.zeros(n_out), name="b")

    def output(self, x):
        return self.activation(T.dot(self.incoming.output(x), self.W) + self.b)


class Input:
    def output(self, x):
        return x


def get_all_params(expression):
    """Lasagne's way: the shared variables among the graph's inputs, each once."""
    assert isinstance(expression, theano.Variable)
    found = [v for v in theano.gof.graph.inputs([expression])
             if isinstance(v, theano.compile.SharedVariable)]
    return list(dict.fromkeys(found))


@pytest.mark.parametrize("mode", ["INTERP", None])
def test_a_library_style_program_trains_through_the_graph_api(mode):
    rng = np.random.default_rng(0)
    net = Dense(Dense(Input(), 3, 4, rng), 4, 1, rng, activation=lambda v: v)
    x, t = T.dmatrix("x"), T.dmatrix("t")
    prediction = net.output(x)
    loss = ((prediction - t) ** 2).mean()
    params = get_all_params(loss)
    assert [p.name for p in params] == ["W", "b", "W", "b"]
    assert all(isinstance(p, theano.compile.SharedVariable) for p in params)
    # An evaluation pass on noisy inputs, made by replacing the input in the built graph.
    noisy = T.dmatrix("noisy")
    noisy_loss = theano.clone(loss, replace={x: noisy})
    assert not graph.is_same_graph(loss, noisy_loss)
    assert graph.is_same_graph(loss, noisy_loss, givens={x: noisy})
    grads = theano.grad(loss, params)
    train = theano.function([x, t], loss, mode=mode,
                            updates=[(p, p - 0.1 * g) for p, g in zip(params, grads)])
    evaluate = theano.function([noisy, t], noisy_loss, mode=mode)
    data = rng.standard_normal((16, 3))
    target = data.sum(axis=1, keepdims=True)
    before = evaluate(data, target)
    for _ in range(30):
        train(data, target)
    after = evaluate(data, target)
    assert after < before * 0.5
    # the cloned graph reads the same parameters, so it sees what training changed
    np.testing.assert_allclose(after, theano.function([x, t], loss, mode=mode)(data, target))


def test_a_variable_made_directly_is_a_placeholder_ops_refuse():
    v = theano.Variable("my type", name="v")
    assert isinstance(v, theano.gof.Variable) and v.owner is None and v.type == "my type"
    with pytest.raises(TypeError, match="Variable made directly"):
        T.exp(v)
