"""The ATIS slot-filling Elman network as the tutorial writes it: embeddings indexed by a matrix
of word ids (a context window per word) and reshaped, a recurrence in ``scan`` whose per-step
softmax of a vector is a ``1 x n`` row, the sentence's negative log-likelihood read with
``[arange(n), y]``, SGD on every parameter including the initial state, and an update that
renormalizes the embeddings' rows. A compiled model also survives ``copy.deepcopy``, as the
tutorial keeps its best model."""
import copy
import warnings

import numpy as np

import lowering as theano
import lowering.tensor as T

NH, NC, NE, DE, CS = 5, 3, 9, 4, 3


def contextwin(words, win):
    """Each word's window of ``win`` ids centred on it, padded with -1 (the tutorial's)."""
    padded = win // 2 * [-1] + list(words) + win // 2 * [-1]
    return np.array([padded[i:i + win] for i in range(len(words))], dtype="int32")


def sigmoid(a):
    return 1 / (1 + np.exp(-a))


class Elman:
    def __init__(self, seed=0):
        r = np.random.default_rng(seed)
        shapes = {"emb": (NE + 1, DE), "wx": (DE * CS, NH), "wh": (NH, NH), "w": (NH, NC)}
        self.emb, self.wx, self.wh, self.w = (
            theano.shared(0.2 * r.uniform(-1, 1, s), name=k) for k, s in shapes.items())
        self.bh = theano.shared(np.zeros(NH), name="bh")
        self.b = theano.shared(np.zeros(NC), name="b")
        self.h0 = theano.shared(np.zeros(NH), name="h0")
        self.params = [self.emb, self.wx, self.wh, self.w, self.bh, self.b, self.h0]
        idxs = T.imatrix()
        x = self.emb[idxs].reshape((idxs.shape[0], DE * CS))
        y_sentence = T.ivector("y_sentence")

        def recurrence(x_t, h_tm1):
            h_t = T.nnet.sigmoid(T.dot(x_t, self.wx) + T.dot(h_tm1, self.wh) + self.bh)
            s_t = T.nnet.softmax(T.dot(h_t, self.w) + self.b)
            return [h_t, s_t]

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # softmax of a vector is deprecated
            [h, s], _ = theano.scan(fn=recurrence, sequences=x, outputs_info=[self.h0, None],
                                    n_steps=x.shape[0])
        probs = s[:, 0, :]
        lr = T.scalar("lr")
        nll = -T.mean(T.log(probs)[T.arange(x.shape[0]), y_sentence])
        grads = T.grad(nll, self.params)
        self.probs = theano.function([idxs], probs)
        self.classify = theano.function([idxs], T.argmax(probs, axis=1))
        self.nll = theano.function([idxs, y_sentence], nll)
        self.sentence_train = theano.function(
            [idxs, y_sentence, lr], nll,
            updates=[(p, p - lr * g) for p, g in zip(self.params, grads)])
        self.normalize = theano.function(inputs=[], updates={
            self.emb: self.emb / T.sqrt((self.emb ** 2).sum(axis=1)).dimshuffle(0, "x")})

    def numpy_probs(self, windows):
        emb, wx, wh, w, bh, b, h = (p.get_value() for p in self.params)
        x = emb[windows].reshape(len(windows), DE * CS)   # -1 reads the last row, as in Theano
        out = []
        for x_t in x:
            h = sigmoid(x_t @ wx + h @ wh + bh)
            logits = h @ w + b
            out.append(np.exp(logits - logits.max()) / np.exp(logits - logits.max()).sum())
        return np.array(out)


def sentences(n=6, seed=1):
    r = np.random.default_rng(seed)
    words = [r.integers(0, NE, r.integers(3, 8)) for _ in range(n)]
    return [(w, (w % NC).astype("int32")) for w in words]  # the label follows the word


def test_elman_forward_matches_numpy_and_training_lowers_the_nll():
    rnn = Elman()
    data = sentences()
    windows = contextwin(data[0][0], CS)
    np.testing.assert_allclose(rnn.probs(windows), rnn.numpy_probs(windows), rtol=1e-10)

    def total():
        return sum(rnn.nll(contextwin(w, CS), y) for w, y in data)

    before = total()
    for epoch in range(15):
        for words, labels in data:
            rnn.sentence_train(contextwin(words, CS), labels, 0.5)
            rnn.normalize()
            np.testing.assert_allclose(np.linalg.norm(rnn.emb.get_value(), axis=1), 1.0)
    assert total() < 0.6 * before
    best = copy.deepcopy(rnn)
    windows = contextwin(data[1][0], CS)
    np.testing.assert_array_equal(best.classify(windows), rnn.classify(windows))


def test_one_sgd_step_of_the_elman_network_matches_finite_differences():
    rnn = Elman(seed=3)
    words, labels = sentences(1, seed=4)[0]
    windows = contextwin(words, CS)

    def nll_numpy():
        p = rnn.numpy_probs(windows)
        return -np.mean(np.log(p[np.arange(len(words)), labels]))

    np.testing.assert_allclose(rnn.nll(windows, labels), nll_numpy(), rtol=1e-10)
    before = [p.get_value() for p in rnn.params]
    eps = 1e-6
    numeric = []
    for p, value in zip(rnn.params, before):
        g = np.zeros_like(value)
        for pos in np.ndindex(*value.shape):
            for sign in (1, -1):
                moved = value.copy()
                moved[pos] += sign * eps
                p.set_value(moved)
                g[pos] += sign * nll_numpy() / (2 * eps)
            p.set_value(value)
        numeric.append(g)
    rnn.sentence_train(windows, labels, 0.1)
    for p, value, g in zip(rnn.params, before, numeric):
        np.testing.assert_allclose(p.get_value(), value - 0.1 * g, rtol=1e-7, atol=1e-9)
