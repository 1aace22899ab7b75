"""JAX's "Gradient checkpointing", "Stateful computations" and
"Just-in-time compilation" pages: checkpoint with policies and named
residuals, remat with static_argnums, a checkpointed scan body; the
Counter example (why hidden state breaks under jit) and its functional
rewrite, state threaded through jit in a training loop with PRNG keys;
tracing side effects, retracing on new shapes, and jit of methods."""


def main(jax):
    from functools import partial
    from typing import NamedTuple

    import jax.numpy as jnp
    from jax.ad_checkpoint import checkpoint_name

    out = {}

    def g(W, x):
        y = jnp.dot(W, x)
        return jnp.sin(y)

    def f(W1, W2, W3, x):
        x = g(W1, x)
        x = g(W2, x)
        x = g(W3, x)
        return x
    W1 = jnp.ones((5, 4)) / 4
    W2 = jnp.ones((6, 5)) / 5
    W3 = jnp.ones((7, 6)) / 6
    x = jnp.linspace(-1.0, 1.0, 4)
    f2 = lambda *a: jnp.sum(f(*a))
    plain = jax.grad(f2, argnums=(0, 1))(W1, W2, W3, x)
    f3 = jax.checkpoint(f, policy=jax.checkpoint_policies.dots_with_no_batch_dims_saveable)
    with_policy = jax.grad(lambda *a: jnp.sum(f3(*a)), argnums=(0, 1))(W1, W2, W3, x)
    out["policy_same"] = all(bool(jnp.allclose(a, b)) for a, b in zip(plain, with_policy))
    out["policy_grad"] = with_policy[1]

    def g_named(W, x):
        y = jnp.dot(W, x)
        y = checkpoint_name(y, "dot_out")
        return jnp.sin(y)
    policy = jax.checkpoint_policies.save_only_these_names("dot_out")
    g_ck = jax.checkpoint(g_named, policy=policy)
    out["named_grad"] = jax.grad(lambda W: jnp.sum(g_ck(W, x)))(W1)
    out["nothing_saveable"] = jax.grad(lambda W: jnp.sum(jax.checkpoint(
        g, policy=jax.checkpoint_policies.nothing_saveable)(W, x)))(W1)
    out["everything_saveable"] = jax.jit(jax.grad(lambda W: jnp.sum(jax.checkpoint(
        g, policy=jax.checkpoint_policies.everything_saveable)(W, x))))(W1)

    @partial(jax.remat, static_argnums=(1,))
    def repeated(x, n):
        for _ in range(n):
            x = jnp.sin(x) * 1.5
        return x
    out["remat_static"] = jax.grad(lambda v: jnp.sum(repeated(v, 3)))(x)

    def scan_body(carry, w):
        return jnp.tanh(carry * w + 0.1), None
    ws = jnp.linspace(0.5, 1.5, 6)
    out["ckpt_scan"] = jax.grad(lambda c: jax.lax.scan(jax.checkpoint(scan_body), c, ws)[0])(0.3)
    out["ckpt_jit_vmap"] = jax.jit(jax.vmap(jax.grad(jax.checkpoint(
        lambda v: jnp.sin(v) ** 2))))(x)

    # the Counter example
    class Counter:
        """A simple counter."""

        def __init__(self):
            self.n = 0

        def count(self) -> int:
            """Increments the counter and returns the new value."""
            self.n += 1
            return self.n

        def reset(self):
            """Resets the counter to zero."""
            self.n = 0
    counter = Counter()
    out["counter_eager"] = [counter.count() for _ in range(3)]
    counter.reset()
    fast_count = jax.jit(counter.count)
    out["counter_jit"] = [int(fast_count()) for _ in range(3)]

    CounterState = int

    class CounterV2:
        def count(self, n: CounterState) -> tuple[int, CounterState]:
            return n + 1, n + 1

        def reset(self) -> CounterState:
            return 0
    counter2 = CounterV2()
    state = counter2.reset()
    fast_count2 = jax.jit(counter2.count)
    values = []
    for _ in range(3):
        value, state = fast_count2(state)
        values.append(int(value))
    out["counter_functional"] = values

    # state in a training loop, with PRNG keys split as it goes
    class Params(NamedTuple):
        weight: jnp.ndarray
        bias: jnp.ndarray

    class TrainState(NamedTuple):
        params: Params
        momentum: Params
        step: jnp.ndarray
        key: jnp.ndarray

    def loss(params, xb, yb):
        return jnp.mean((params.weight * xb + params.bias - yb) ** 2)

    @jax.jit
    def train_step(state: TrainState) -> tuple[TrainState, jnp.ndarray]:
        key, subkey = jax.random.split(state.key)
        xb = jax.random.uniform(subkey, (16,), minval=-1.0, maxval=1.0)
        yb = 3.0 * xb - 0.5
        l, grads = jax.value_and_grad(loss)(state.params, xb, yb)
        momentum = jax.tree.map(lambda m, g: 0.9 * m + g, state.momentum, grads)
        params = jax.tree.map(lambda p, m: p - 0.1 * m, state.params, momentum)
        return TrainState(params, momentum, state.step + 1, key), l
    p0 = Params(jnp.float32(0.0), jnp.float32(0.0))
    ts = TrainState(p0, jax.tree.map(jnp.zeros_like, p0), jnp.int32(0), jax.random.PRNGKey(0))
    losses = []
    for _ in range(20):
        ts, l = train_step(ts)
        losses.append(l)
    out["train_loss_drops"] = bool(losses[-1] < losses[0])
    out["train_step"] = ts.step

    # tracing side effects and retracing
    traces = []

    @jax.jit
    def traced_fn(v):
        traces.append(v.shape)        # runs while tracing only
        return v * 2
    traced_fn(jnp.ones(3))
    traced_fn(jnp.ones(3) * 5)
    traced_fn(jnp.ones(4))
    traced_fn(jnp.ones(3, dtype=jnp.int32))
    out["trace_count"] = len(traces)
    out["traced_shapes"] = [tuple(s) for s in traces]

    class Scaler:
        def __init__(self, factor):
            self.factor = factor

        @partial(jax.jit, static_argnums=0)
        def apply(self, v):
            return v * self.factor

        def __hash__(self):
            return hash(self.factor)

        def __eq__(self, other):
            return isinstance(other, Scaler) and self.factor == other.factor
    out["jit_method"] = (Scaler(2.0).apply(x), Scaler(3.0).apply(x))

    def f_cond(x, n):
        return x * n if n > 0 else -x
    out["static_argnames"] = jax.jit(f_cond, static_argnames=["n"])(x, n=2)
    out["jit_python_scalar"] = jax.jit(lambda a, b: a + b)(1, 2.5)
    return out
