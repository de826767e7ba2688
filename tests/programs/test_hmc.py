"""Hamiltonian Monte Carlo as the tutorial writes it: velocities drawn from
``MRG_RandomStreams.normal``, leapfrog steps in ``scan`` with the energy's gradient taken inside
the step, a Metropolis-Hastings test against a uniform draw, and one ``theano.function`` whose
updates move the shared positions where the move was accepted (``T.switch``), adapt the shared
step size toward a target acceptance rate and keep a moving average of it. One move is checked
against NumPy given the same draws; a chain samples a Gaussian."""
import numpy as np

import lowering as theano
import lowering.tensor as T
from lowering.sandbox.rng_mrg import MRG_RandomStreams

MU = np.array([1.0, -2.0])
COV = np.array([[1.0, 0.6], [0.6, 2.0]])
PREC = np.linalg.inv(COV)


def energy(x):
    return 0.5 * (T.dot(x - MU, PREC) * (x - MU)).sum(axis=1)


def kinetic(v):
    return 0.5 * (v ** 2).sum(axis=1)


def simulate_dynamics(pos0, vel0, stepsize, n_steps):
    def leapfrog(pos, vel, step):
        dE = T.grad(energy(pos).sum(), pos)
        new_vel = vel - step * dE
        return [pos + step * new_vel, new_vel], {}

    vel_half = vel0 - 0.5 * stepsize * T.grad(energy(pos0).sum(), pos0)
    pos_full = pos0 + stepsize * vel_half
    (all_pos, all_vel), scan_updates = theano.scan(
        leapfrog, outputs_info=[dict(initial=pos_full), dict(initial=vel_half)],
        non_sequences=[stepsize], n_steps=n_steps - 1)
    assert not scan_updates
    final_pos = all_pos[-1]
    return final_pos, all_vel[-1] - 0.5 * stepsize * T.grad(energy(final_pos).sum(), final_pos)


def build_sampler(chains=4, n_steps=10, seed=7, target=0.9):
    r = np.random.default_rng(seed)
    positions = theano.shared(r.normal(size=(chains, 2)), name="positions")
    stepsize = theano.shared(np.float64(0.05), name="stepsize")
    avg_rate = theano.shared(np.float64(target), name="avg_acceptance_rate")
    s_rng = MRG_RandomStreams(seed)
    vel0 = s_rng.normal(size=positions.shape)
    final_pos, final_vel = simulate_dynamics(positions, vel0, stepsize, n_steps)
    h0 = energy(positions) + kinetic(vel0)
    h1 = energy(final_pos) + kinetic(final_vel)
    u = s_rng.uniform(size=h0.shape)
    accept = (T.exp(h0 - h1) - u) >= 0
    new_positions = T.switch(accept.dimshuffle(0, "x"), final_pos, positions)
    new_stepsize = T.clip(T.switch(avg_rate > target, stepsize * 1.02, stepsize * 0.98),
                          0.001, 0.25)
    new_rate = 0.9 * avg_rate + 0.1 * accept.mean(dtype=theano.config.floatX)
    draw = theano.function(
        [], [positions, vel0, u, final_pos, accept],
        updates=[(positions, new_positions), (stepsize, new_stepsize), (avg_rate, new_rate)])
    return draw, positions, stepsize, avg_rate


def numpy_move(pos, vel, u, step, n_steps):
    def grad(x):
        return (x - MU) @ PREC

    def energy_np(x):
        return 0.5 * np.sum(((x - MU) @ PREC) * (x - MU), axis=1)

    v = vel - 0.5 * step * grad(pos)
    x = pos + step * v
    for _ in range(n_steps - 1):
        v = v - step * grad(x)
        x = x + step * v
    v = v - 0.5 * step * grad(x)
    h0 = energy_np(pos) + 0.5 * (vel ** 2).sum(1)
    h1 = energy_np(x) + 0.5 * (v ** 2).sum(1)
    accept = np.exp(h0 - h1) - u >= 0
    return x, accept, np.where(accept[:, None], x, pos)


def test_one_hmc_move_matches_numpy_for_its_draws():
    draw, positions, stepsize, avg_rate = build_sampler()
    for _ in range(5):
        step, rate = stepsize.get_value(), avg_rate.get_value()
        old, vel, u, final, accept = draw()
        want_final, want_accept, want_new = numpy_move(old, vel, u, step, 10)
        np.testing.assert_allclose(final, want_final, rtol=1e-10)
        np.testing.assert_array_equal(accept, want_accept)
        np.testing.assert_allclose(positions.get_value(), want_new, rtol=1e-10)
        np.testing.assert_allclose(stepsize.get_value(),
                                   np.clip(step * (1.02 if rate > 0.9 else 0.98), 0.001, 0.25))
        np.testing.assert_allclose(avg_rate.get_value(), 0.9 * rate + 0.1 * accept.mean())


def test_hmc_chain_samples_the_gaussian():
    draw, positions, stepsize, avg_rate = build_sampler(chains=20, seed=11)
    for _ in range(100):  # burn-in
        draw()
    samples = np.concatenate([draw()[0] for _ in range(300)])
    np.testing.assert_allclose(samples.mean(axis=0), MU, atol=0.25)
    np.testing.assert_allclose(np.cov(samples.T), COV, atol=0.35)
    assert abs(avg_rate.get_value() - 0.9) < 0.1
    assert 0.001 <= stepsize.get_value() <= 0.25
