"""A Python op (``theano.Op``) with both derivative rules, for the gradient tests."""
import lowering as theano
import lowering.tensor as T


class TwiceOp(theano.Op):
    """2 * x. Its gradient and its R-op are built from the op itself, so a reverse sweep through
    it goes through a Python op again (which has no batching rule)."""

    __props__ = ()

    def make_node(self, x):
        x = T.as_tensor_variable(x)
        return theano.Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0] * 2

    def grad(self, inputs, output_grads):
        return [TwiceOp()(output_grads[0])]

    def R_op(self, inputs, eval_points):
        return [None if eval_points[0] is None else TwiceOp()(eval_points[0])]
