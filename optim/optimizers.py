"""The optimizers of `jax.example_libraries.optimizers`, and AdamW, LAMB and Lion.

Each optimizer is written for ONE array and lifted to parameter pytrees by `@optimizer`
(optim/base.py, where the contract lives). Its per-array state is a NamedTuple whose first field
`x` is the parameter itself (so `get_params(init(p)) == p`) and whose other fields are named as
in the paper. `update(i, g, state)` receives the 0-based step count `i`; bias corrections use
`i + 1`, as JAX does. `step_size` is a number or a schedule `step -> size`.

Example (the minmax loop):
    >>> import core.numpy as jnp
    >>> init, update, get_params = adam(1e-2)
    >>> opt_state = init({"w": jnp.ones(3)})
    >>> grads = {"w": jnp.ones(3)}
    >>> opt_state = update(0, grads, opt_state)
    >>> print(get_params(opt_state)["w"])   # each entry moves by ~step_size against its gradient
    [0.99 0.99 0.99]
"""
import functools
from typing import NamedTuple

import core.numpy as jnp

from .base import optimizer
from .schedules import make_schedule

__all__ = [
    "sgd", "momentum", "nesterov", "adagrad", "rmsprop", "rmsprop_momentum", "adam", "adamw",
    "adamax", "sm3", "lamb", "lion",
    "SgdState", "MomentumState", "AdagradState", "RmspropState", "RmspropMomentumState",
    "AdamState", "AdamaxState", "SM3State", "LionState",
]


def _adam_moments(i, g, m, v, b1, b2):
    """Adam's moment estimates (Kingma & Ba 2015, Algorithm 1), shared by adam, adamw and lamb:
    the running first and second moments and their bias-corrected values at step i (0-based)."""
    t = i + 1
    m = b1 * m + (1 - b1) * g
    v = b2 * v + (1 - b2) * jnp.square(g)
    return m, v, m / (1 - b1 ** t), v / (1 - b2 ** t)


def _identity_params(state):
    return state.x


# ----- plain gradient descent ---------------------------------------------------------------------

class SgdState(NamedTuple):
    x: object


@optimizer
def sgd(step_size):
    """Stochastic gradient descent (Robbins & Monro, 1951, "A Stochastic Approximation Method",
    Ann. Math. Statist. 22(3)): `x <- x - step_size(i) * g`.

    Example:
        >>> init, update, get_params = sgd(0.1)
        >>> print(get_params(update(0, jnp.ones(2), init(jnp.zeros(2)))))
        [-0.1 -0.1]
    """
    step_size = make_schedule(step_size)

    def init(x0):
        return SgdState(x0)

    def update(i, g, state):
        return SgdState(state.x - step_size(i) * g)

    return init, update, _identity_params


# ----- momentum -----------------------------------------------------------------------------------

class MomentumState(NamedTuple):
    x: object
    velocity: object


@optimizer
def momentum(step_size, mass):
    """Heavy-ball momentum (Polyak, 1964, "Some methods of speeding up the convergence of iteration
    methods", USSR Comput. Math. & Math. Phys. 4(5)), in JAX's form:
    `velocity <- mass * velocity + g;  x <- x - step_size(i) * velocity`.

    Example:
        >>> init, update, get_params = momentum(0.1, mass=0.9)
        >>> s = update(1, jnp.ones(2), update(0, jnp.ones(2), init(jnp.zeros(2))))
        >>> print(get_params(s))   # -0.1 * (1 + 1.9)
        [-0.29 -0.29]
    """
    step_size = make_schedule(step_size)

    def init(x0):
        return MomentumState(x0, jnp.zeros_like(x0))

    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        x = x - step_size(i) * velocity
        return MomentumState(x, velocity)

    return init, update, _identity_params


@optimizer
def nesterov(step_size, mass):
    """Nesterov's accelerated gradient (Nesterov, 1983, Soviet Math. Dokl. 27; in the momentum form
    of Sutskever, Martens, Dahl & Hinton, ICML 2013): the step looks ahead along the velocity,
    `velocity <- mass * velocity + g;  x <- x - step_size(i) * (mass * velocity + g)`.

    Example:
        >>> init, update, get_params = nesterov(0.1, mass=0.9)
        >>> print(get_params(update(0, jnp.ones(2), init(jnp.zeros(2)))))   # -0.1 * 1.9
        [-0.19 -0.19]
    """
    step_size = make_schedule(step_size)

    def init(x0):
        return MomentumState(x0, jnp.zeros_like(x0))

    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        x = x - step_size(i) * (mass * velocity + g)
        return MomentumState(x, velocity)

    return init, update, _identity_params


# ----- adaptive per-coordinate step sizes ---------------------------------------------------------

class AdagradState(NamedTuple):
    x: object
    g_sq: object   # running sum of squared gradients
    m: object      # momentum of the preconditioned gradient


@optimizer
def adagrad(step_size, momentum=0.9):
    """Adagrad (Duchi, Hazan & Singer, 2011, "Adaptive Subgradient Methods for Online Learning and
    Stochastic Optimization", JMLR 12), with JAX's momentum on the preconditioned gradient:
    `g_sq <- g_sq + g^2;  m <- (1 - momentum) * g / sqrt(g_sq) + momentum * m;
    x <- x - step_size(i) * m`, where coordinates with `g_sq == 0` get no step.

    Example:
        >>> init, update, get_params = adagrad(0.1)
        >>> print(get_params(update(0, jnp.ones(2), init(jnp.zeros(2)))))   # -0.1 * (1 - 0.9)
        [-0.01 -0.01]
    """
    step_size = make_schedule(step_size)

    def init(x0):
        return AdagradState(x0, jnp.zeros_like(x0), jnp.zeros_like(x0))

    def update(i, g, state):
        x, g_sq, m = state
        g_sq = g_sq + jnp.square(g)
        g_sq_inv_sqrt = jnp.where(g_sq > 0, 1.0 / jnp.sqrt(g_sq), 0.0)
        m = (1.0 - momentum) * (g * g_sq_inv_sqrt) + momentum * m
        x = x - step_size(i) * m
        return AdagradState(x, g_sq, m)

    return init, update, _identity_params


class RmspropState(NamedTuple):
    x: object
    avg_sq_grad: object   # exponential moving average of g^2


@optimizer
def rmsprop(step_size, gamma=0.9, eps=1e-8):
    """RMSProp (Tieleman & Hinton, 2012, Coursera "Neural Networks for Machine Learning",
    lecture 6.5): `avg_sq_grad <- gamma * avg_sq_grad + (1 - gamma) * g^2;
    x <- x - step_size(i) * g / sqrt(avg_sq_grad + eps)` (eps inside the root, as JAX).

    Example:
        >>> init, update, get_params = rmsprop(0.01)
        >>> print(get_params(update(0, jnp.ones(2), init(jnp.zeros(2)))))   # -0.01 / sqrt(0.1)
        [-0.03162277 -0.03162277]
    """
    step_size = make_schedule(step_size)

    def init(x0):
        return RmspropState(x0, jnp.zeros_like(x0))

    def update(i, g, state):
        x, avg_sq_grad = state
        avg_sq_grad = gamma * avg_sq_grad + (1.0 - gamma) * jnp.square(g)
        x = x - step_size(i) * g / jnp.sqrt(avg_sq_grad + eps)
        return RmspropState(x, avg_sq_grad)

    return init, update, _identity_params


class RmspropMomentumState(NamedTuple):
    x: object
    avg_sq_grad: object
    mom: object   # momentum of the RMS-scaled steps


@optimizer
def rmsprop_momentum(step_size, gamma=0.9, eps=1e-8, momentum=0.9):
    """RMSProp with momentum on its steps (Tieleman & Hinton, 2012, lecture 6.5; the momentum
    form of Graves, 2013, arXiv:1308.0850, without centring), as JAX:
    `avg_sq_grad <- gamma * avg_sq_grad + (1 - gamma) * g^2;
    mom <- momentum * mom + step_size(i) * g / sqrt(avg_sq_grad + eps);  x <- x - mom`.

    Example:
        >>> init, update, get_params = rmsprop_momentum(0.01)
        >>> s = update(1, jnp.ones(2), update(0, jnp.ones(2), init(jnp.zeros(2))))
        >>> print(get_params(s))   # -(mom_0 + mom_1), mom_1 = 0.9 mom_0 + 0.01 / sqrt(0.19)
        [-0.08302484 -0.08302484]
    """
    step_size = make_schedule(step_size)

    def init(x0):
        return RmspropMomentumState(x0, jnp.zeros_like(x0), jnp.zeros_like(x0))

    def update(i, g, state):
        x, avg_sq_grad, mom = state
        avg_sq_grad = gamma * avg_sq_grad + (1.0 - gamma) * jnp.square(g)
        mom = momentum * mom + step_size(i) * g / jnp.sqrt(avg_sq_grad + eps)
        x = x - mom
        return RmspropMomentumState(x, avg_sq_grad, mom)

    return init, update, _identity_params


# ----- Adam and its family ------------------------------------------------------------------------

class AdamState(NamedTuple):
    x: object
    m: object   # first moment estimate (EMA of g)
    v: object   # second raw moment estimate (EMA of g^2)


@optimizer
def adam(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """Adam (Kingma & Ba, ICLR 2015, arXiv:1412.6980, Algorithm 1):
    `m <- b1 m + (1 - b1) g;  v <- b2 v + (1 - b2) g^2;  mhat = m / (1 - b1^t);
    vhat = v / (1 - b2^t);  x <- x - step_size(i) * mhat / (sqrt(vhat) + eps)` with `t = i + 1`.

    Example:
        >>> init, update, get_params = adam(1e-3)
        >>> print(get_params(update(0, jnp.ones(2), init(jnp.zeros(2)))))   # mhat / sqrt(vhat) = 1
        [-0.001 -0.001]
    """
    step_size = make_schedule(step_size)

    def init(x0):
        return AdamState(x0, jnp.zeros_like(x0), jnp.zeros_like(x0))

    def update(i, g, state):
        x, m, v = state
        m, v, mhat, vhat = _adam_moments(i, g, m, v, b1, b2)
        x = x - step_size(i) * mhat / (jnp.sqrt(vhat) + eps)
        return AdamState(x, m, v)

    return init, update, _identity_params


@optimizer
def adamw(step_size, b1=0.9, b2=0.999, eps=1e-8, weight_decay=1e-2):
    """AdamW, Adam with decoupled weight decay (Loshchilov & Hutter, ICLR 2019, arXiv:1711.05101,
    Algorithm 2): the decay acts on the parameters directly instead of through the gradient, so the
    adaptive scaling never touches it:
    `x <- x - step_size(i) * (mhat / (sqrt(vhat) + eps) + weight_decay * x)`, with `m`, `v`,
    `mhat`, `vhat` as in Adam. The decay is scaled by the step size (the paper's schedule
    multiplier eta_t times alpha), as in PyTorch and optax.

    Example:
        >>> init, update, get_params = adamw(0.1, weight_decay=0.5)
        >>> print(get_params(update(0, jnp.zeros(2), init(jnp.ones(2)))))   # pure decay: 1 - 0.1 * 0.5
        [0.95 0.95]
    """
    step_size = make_schedule(step_size)

    def init(x0):
        return AdamState(x0, jnp.zeros_like(x0), jnp.zeros_like(x0))

    def update(i, g, state):
        x, m, v = state
        m, v, mhat, vhat = _adam_moments(i, g, m, v, b1, b2)
        x = x - step_size(i) * (mhat / (jnp.sqrt(vhat) + eps) + weight_decay * x)
        return AdamState(x, m, v)

    return init, update, _identity_params


class AdamaxState(NamedTuple):
    x: object
    m: object   # first moment estimate
    u: object   # exponentially weighted infinity norm of the gradients


@optimizer
def adamax(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """AdaMax, Adam under the infinity norm (Kingma & Ba, ICLR 2015, arXiv:1412.6980, section 7.1,
    Algorithm 2): `m <- b1 m + (1 - b1) g;  u <- max(b2 u, |g|);
    x <- x - (step_size(i) / (1 - b1^t)) * m / (u + eps)` with `t = i + 1` (eps as JAX, so a zero
    gradient history divides safely).

    Example:
        >>> init, update, get_params = adamax(2e-3)
        >>> print(get_params(update(0, jnp.ones(2), init(jnp.zeros(2)))))   # m / (1 - b1) / u = 1
        [-0.002 -0.002]
    """
    step_size = make_schedule(step_size)

    def init(x0):
        return AdamaxState(x0, jnp.zeros_like(x0), jnp.zeros_like(x0))

    def update(i, g, state):
        x, m, u = state
        t = i + 1
        m = b1 * m + (1 - b1) * g
        u = jnp.maximum(b2 * u, jnp.abs(g))
        x = x - (step_size(i) / (1 - b1 ** t)) * m / (u + eps)
        return AdamaxState(x, m, u)

    return init, update, _identity_params


# ----- SM3 ----------------------------------------------------------------------------------------

class SM3State(NamedTuple):
    x: object
    m: object    # momentum of the preconditioned gradient
    vs: tuple    # one accumulator per dimension of x (a 0-d x counts as shape (1,)), as JAX


@optimizer
def sm3(step_size, momentum=0.9):
    """SM3 (Anil, Gupta, Koren & Singer, NeurIPS 2019, "Memory-Efficient Adaptive Optimization",
    arXiv:1901.11150, SM3-II), with JAX's momentum. Instead of Adagrad's full `g_sq` it keeps one
    vector per dimension (the "cover" of rows, columns, ...), O(sum of dims) memory:
    `nu = min_r broadcast(vs[r]) + g^2;  m <- (1 - momentum) g / sqrt(nu) + momentum m;
    x <- x - step_size(i) m;  vs[r] <- max of nu over every axis but r`. Works for any rank.

    Example:
        >>> init, update, get_params = sm3(0.1)
        >>> s = update(0, jnp.ones((3, 2)), init(jnp.zeros((3, 2))))
        >>> [v.shape for v in s.packed_state[0][2:]]   # the accumulators of rows and columns
        [(3,), (2,)]
    """
    step_size = make_schedule(step_size)

    def init(x0):
        # A scalar gets one accumulator of size 1 (JAX's atleast_1d) so it still adapts.
        shape = jnp.shape(x0) or (1,)
        vs = tuple(jnp.zeros(n, dtype=jnp.result_type(x0)) for n in shape)
        return SM3State(x0, jnp.zeros_like(x0), vs)

    def update(i, g, state):
        x, m, vs = state
        g1 = jnp.reshape(g, jnp.shape(g) or (1,))
        ndim = g1.ndim
        # Each accumulator, laid along its own axis, upper-bounds the squared-gradient sums of the
        # entries it covers; the tightest bound is their minimum.
        covers = [jnp.reshape(v, tuple(-1 if r == j else 1 for j in range(ndim)))
                  for r, v in enumerate(vs)]
        nu = functools.reduce(jnp.minimum, covers) + jnp.square(g1)
        nu_inv_sqrt = jnp.reshape(jnp.where(nu > 0, 1.0 / jnp.sqrt(nu), 0.0), jnp.shape(g))
        m = (1.0 - momentum) * (g * nu_inv_sqrt) + momentum * m
        x = x - step_size(i) * m
        vs = tuple(jnp.max(nu, axis=tuple(j for j in range(ndim) if j != r)) for r in range(ndim))
        return SM3State(x, m, vs)

    return init, update, _identity_params


# ----- LAMB ---------------------------------------------------------------------------------------

def _l2_norm(a):
    return jnp.sqrt(jnp.sum(jnp.square(a)))


@optimizer
def lamb(step_size, b1=0.9, b2=0.999, eps=1e-6, weight_decay=0.0):
    """LAMB, layer-wise adaptive moments (You et al., ICLR 2020, "Large Batch Optimization for
    Deep Learning: Training BERT in 76 minutes", arXiv:1904.00962, Algorithm 2; defaults as optax).
    The Adam direction plus decoupled decay, `r = mhat / (sqrt(vhat) + eps) + weight_decay * x`, is
    rescaled per array ("layer") by the trust ratio `||x|| / ||r||` (1 where either norm is 0):
    `x <- x - step_size(i) * (||x|| / ||r||) * r`. The scaling function phi is the identity.

    Example:
        >>> init, update, get_params = lamb(1e-2)
        >>> print(get_params(update(0, jnp.ones(2), init(jnp.ones(2)))))   # a step of 1% of ||x||
        [0.99 0.99]
    """
    step_size = make_schedule(step_size)

    def init(x0):
        return AdamState(x0, jnp.zeros_like(x0), jnp.zeros_like(x0))

    def update(i, g, state):
        x, m, v = state
        m, v, mhat, vhat = _adam_moments(i, g, m, v, b1, b2)
        r = mhat / (jnp.sqrt(vhat) + eps) + weight_decay * x
        x_norm, r_norm = _l2_norm(x), _l2_norm(r)
        trust_ratio = jnp.where((x_norm > 0) & (r_norm > 0), x_norm / r_norm, 1.0)
        x = x - step_size(i) * trust_ratio * r
        return AdamState(x, m, v)

    return init, update, _identity_params


# ----- Lion ---------------------------------------------------------------------------------------

class LionState(NamedTuple):
    x: object
    m: object   # the momentum (EMA of g with rate b2)


@optimizer
def lion(step_size, b1=0.9, b2=0.99, weight_decay=0.0):
    """Lion, EvoLved Sign Momentum (Chen et al., 2023, "Symbolic Discovery of Optimization
    Algorithms", arXiv:2302.06675, Program 1): the step is the sign of an interpolation of momentum
    and gradient, with decoupled weight decay; the momentum then tracks g with its own rate:
    `c = b1 m + (1 - b1) g;  x <- x - step_size(i) * (sign(c) + weight_decay * x);
    m <- b2 m + (1 - b2) g`. Every coordinate moves by exactly step_size, so use a step size
    3-10x smaller than Adam's.

    Example:
        >>> init, update, get_params = lion(1e-4)
        >>> print(get_params(update(0, jnp.ones(2), init(jnp.zeros(2)))))
        [-0.0001 -0.0001]
    """
    step_size = make_schedule(step_size)

    def init(x0):
        return LionState(x0, jnp.zeros_like(x0))

    def update(i, g, state):
        x, m = state
        c = b1 * m + (1 - b1) * g
        x = x - step_size(i) * (jnp.sign(c) + weight_decay * x)
        m = b2 * m + (1 - b2) * g
        return LionState(x, m)

    return init, update, _identity_params
