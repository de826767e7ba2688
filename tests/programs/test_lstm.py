"""The IMDB sentiment LSTM as the tutorial writes it: word embeddings gathered by a flattened
matrix of word ids, four gates sliced out of one pre-activation, sequences of different lengths
in one minibatch through a mask inside ``scan`` (initial states from ``alloc``), mean pooling
over the unmasked steps, a softmax read at ``[arange(n), y]``, and adadelta's shared
accumulators. The forward pass is checked against a NumPy loop, the gradient against finite
differences, and a few steps of training must lower the cost."""
import numpy as np

import lowering as theano
import lowering.tensor as T

DIM, WORDS, CLASSES = 4, 12, 2


def sigmoid(a):
    return 1 / (1 + np.exp(-a))


def init_params(seed=0):
    r = np.random.default_rng(seed)

    def ortho():
        u, _, _ = np.linalg.svd(r.normal(size=(DIM, DIM)))
        return u

    return {"Wemb": 0.1 * r.normal(size=(WORDS, DIM)),
            "W": np.concatenate([ortho() for _ in range(4)], axis=1),
            "U": np.concatenate([ortho() for _ in range(4)], axis=1),
            "b": np.zeros(4 * DIM),
            "Uout": 0.1 * r.normal(size=(DIM, CLASSES)), "bout": np.zeros(CLASSES)}


def build(tparams):
    x = T.matrix("x", dtype="int64")
    mask = T.matrix("mask")
    y = T.vector("y", dtype="int64")
    steps, samples = x.shape[0], x.shape[1]
    emb = tparams["Wemb"][x.flatten()].reshape([steps, samples, DIM])
    below = T.dot(emb, tparams["W"]) + tparams["b"]

    def gate(preact, k):
        return preact[:, k * DIM:(k + 1) * DIM]

    def step(m_, x_, h_, c_):
        preact = T.dot(h_, tparams["U"])
        preact += x_
        i, f = T.nnet.sigmoid(gate(preact, 0)), T.nnet.sigmoid(gate(preact, 1))
        o, c = T.nnet.sigmoid(gate(preact, 2)), T.tanh(gate(preact, 3))
        c = f * c_ + i * c
        c = m_[:, None] * c + (1. - m_)[:, None] * c_
        h = o * T.tanh(c)
        h = m_[:, None] * h + (1. - m_)[:, None] * h_
        return h, c

    (h, _), _ = theano.scan(step, sequences=[mask, below],
                            outputs_info=[T.alloc(np.float64(0.), samples, DIM),
                                          T.alloc(np.float64(0.), samples, DIM)],
                            n_steps=steps)
    proj = (h * mask[:, :, None]).sum(axis=0) / mask.sum(axis=0)[:, None]
    pred = T.nnet.softmax(T.dot(proj, tparams["Uout"]) + tparams["bout"])
    cost = -T.log(pred[T.arange(samples), y] + 1e-8).mean()
    return x, mask, y, pred, cost


def numpy_forward(p, x, mask):
    steps, samples = x.shape
    below = p["Wemb"][x.flatten()].reshape(steps, samples, DIM) @ p["W"] + p["b"]
    h, c = np.zeros((samples, DIM)), np.zeros((samples, DIM))
    hs = []
    for t in range(steps):
        pre = h @ p["U"] + below[t]
        i, f, o = (sigmoid(pre[:, k * DIM:(k + 1) * DIM]) for k in range(3))
        c_new = f * c + i * np.tanh(pre[:, 3 * DIM:])
        m = mask[t][:, None]
        c = m * c_new + (1 - m) * c
        h = m * (o * np.tanh(c)) + (1 - m) * h
        hs.append(h)
    proj = (np.array(hs) * mask[:, :, None]).sum(0) / mask.sum(0)[:, None]
    logits = proj @ p["Uout"] + p["bout"]
    e = np.exp(logits - logits.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


def minibatch(seed, samples=5):
    """Sequences of 2 to 6 words padded with zeros, as the tutorial's ``prepare_data``."""
    r = np.random.default_rng(seed)
    lengths = r.integers(2, 7, samples)
    x = np.zeros((lengths.max(), samples), dtype="int64")
    mask = np.zeros((lengths.max(), samples))
    for j, n in enumerate(lengths):
        x[:n, j] = r.integers(1, WORDS, n)
        mask[:n, j] = 1
    y = (x[0] > WORDS // 2).astype("int64")  # the label is in the first word
    return x, mask, y


def test_lstm_forward_matches_numpy_and_gradient_matches_finite_differences():
    values = init_params()
    tparams = {k: theano.shared(v, name=k) for k, v in values.items()}
    x, mask, y, pred, cost = build(tparams)
    grads = T.grad(cost, [tparams["U"], tparams["Wemb"]])
    f = theano.function([x, mask, y], [pred, cost] + grads)
    xv, mv, yv = minibatch(1)
    got_pred, got_cost, gU, gWemb = f(xv, mv, yv)
    want = numpy_forward(values, xv, mv)
    np.testing.assert_allclose(got_pred, want, rtol=1e-10)
    np.testing.assert_allclose(got_cost, -np.log(want[np.arange(5), yv] + 1e-8).mean(),
                               rtol=1e-10)

    def cost_of(name, value):
        p = dict(values, **{name: value})
        probs = numpy_forward(p, xv, mv)
        return -np.log(probs[np.arange(5), yv] + 1e-8).mean()

    eps = 1e-6
    for name, got in (("U", gU), ("Wemb", gWemb)):
        numeric = np.zeros_like(values[name])
        for pos in np.ndindex(*numeric.shape):
            up, down = values[name].copy(), values[name].copy()
            up[pos] += eps
            down[pos] -= eps
            numeric[pos] = (cost_of(name, up) - cost_of(name, down)) / (2 * eps)
        np.testing.assert_allclose(got, numeric, rtol=1e-5, atol=1e-9)


def test_lstm_trains_with_adadelta():
    tparams = {k: theano.shared(v, name=k) for k, v in init_params(2).items()}
    x, mask, y, pred, cost = build(tparams)
    params = list(tparams.values())
    grads = T.grad(cost, wrt=params)
    # adadelta as the tutorial writes it: shared accumulators, one function per half-step
    zipped = [theano.shared(p.get_value() * 0.0) for p in params]
    running_up2 = [theano.shared(p.get_value() * 0.0) for p in params]
    running_grads2 = [theano.shared(p.get_value() * 0.0) for p in params]
    f_grad_shared = theano.function(
        [x, mask, y], cost,
        updates=[(zg, g) for zg, g in zip(zipped, grads)] +
                [(rg2, 0.95 * rg2 + 0.05 * (g ** 2)) for rg2, g in zip(running_grads2, grads)])
    updir = [-T.sqrt(ru2 + 1e-6) / T.sqrt(rg2 + 1e-6) * zg
             for zg, ru2, rg2 in zip(zipped, running_up2, running_grads2)]
    f_update = theano.function(
        [], [], updates=[(ru2, 0.95 * ru2 + 0.05 * (ud ** 2)) for ru2, ud in
                         zip(running_up2, updir)] + [(p, p + ud) for p, ud in zip(params, updir)])
    batches = [minibatch(seed, samples=8) for seed in range(4)]
    first = np.mean([f_grad_shared(*b) for b in batches])
    for epoch in range(25):
        for b in batches:
            f_grad_shared(*b)
            f_update()
    assert np.mean([f_grad_shared(*b) for b in batches]) < 0.7 * first
