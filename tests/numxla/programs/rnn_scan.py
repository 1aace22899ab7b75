"""An Elman RNN unrolled with lax.scan over a sequence, trained to predict
the next value of a noisy sine wave; gradients flow back through scan."""


def main(jax):
    jnp, lax, random = jax.numpy, jax.lax, jax.random

    def init(key, n_in, n_hidden, n_out):
        k1, k2, k3 = random.split(key, 3)
        return {
            "wx": random.normal(k1, (n_in, n_hidden)) * 0.5,
            "wh": random.normal(k2, (n_hidden, n_hidden)) * (1.0 / jnp.sqrt(n_hidden)),
            "bh": jnp.zeros(n_hidden),
            "wo": random.normal(k3, (n_hidden, n_out)) * 0.5,
            "bo": jnp.zeros(n_out),
        }

    def rnn(params, xs):
        def cell(h, x):
            h = jnp.tanh(x @ params["wx"] + h @ params["wh"] + params["bh"])
            return h, h @ params["wo"] + params["bo"]
        h0 = jnp.zeros(params["wh"].shape[0])
        h_final, ys = lax.scan(cell, h0, xs)
        return ys, h_final

    def loss(params, xs, ys):
        preds, _ = rnn(params, xs)
        return jnp.mean((preds - ys) ** 2)

    T = 20
    t = jnp.arange(T + 1, dtype=jnp.float32) * 0.3
    key = random.PRNGKey(5)
    series = jnp.sin(t) + 0.05 * random.normal(key, t.shape)
    xs, ys = series[:-1, None], series[1:, None]
    params = init(random.PRNGKey(0), 1, 8, 1)

    @jax.jit
    def train_step(params, xs, ys):
        l, g = jax.value_and_grad(loss)(params, xs, ys)
        return jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, g), l

    losses = []
    for _ in range(10):
        params, l = train_step(params, xs, ys)
        losses.append(l)
    preds, h = rnn(params, xs)

    # scan with no xs (length=), a carry tuple and reverse=True, and cumulative ops
    def fib(carry, _):
        a, b = carry
        return (b, a + b), a
    _, fibs = lax.scan(fib, (jnp.int32(0), jnp.int32(1)), None, length=10)
    rev = lax.scan(lambda c, x: (c + x, c + x), 0.0, jnp.arange(5.0), reverse=True)[1]
    return {"losses": jnp.stack(losses), "preds_tail": preds[-5:, 0], "h": h, "fibs": fibs,
            "rev_cumsum": rev, "cumsum": jnp.cumsum(jnp.arange(5)), "cumprod":
            jnp.cumprod(jnp.arange(1.0, 6.0))}
