"""JAX's "Control flow and logical operators with JIT" page and the lax
loop docs: Python control flow with static_argnums/static_argnames, cond
with several operands and pytree operands, switch, while_loop with pytree
state, fori_loop with traced bounds, scan with xs=None and length,
reverse=True, unroll, pytree carries and outputs, lax.map, associative_scan,
gradients through scan and fori_loop, and logical operators."""


def main(jax):
    from functools import partial

    import jax.numpy as jnp
    from jax import grad, jit, lax

    out = {}

    @partial(jit, static_argnums=(1,))
    def f(x, n):
        y = 0.
        for i in range(n):
            y = y + x[i]
        return y
    out["static_loop"] = f(jnp.array([2., 3., 4.]), 2)

    def g(x, *, mode):
        if mode == "square":
            return x ** 2
        return -x
    g_jit = jit(g, static_argnames="mode")
    out["static_argnames"] = (g_jit(3.0, mode="square"), g_jit(3.0, mode="neg"))

    # cond: several operands, pytree operands, no operands
    operand = jnp.array([0.])
    out["cond_doc"] = (lax.cond(True, lambda x: x + 1, lambda x: x - 1, operand),
                       lax.cond(False, lambda x: x + 1, lambda x: x - 1, operand))
    out["cond_multi"] = lax.cond(jnp.array(3) > 2, lambda a, b: a * b, lambda a, b: a - b,
                                 2.0, jnp.arange(3.0))
    state = {"pos": jnp.array([1.0, 2.0]), "vel": jnp.array([0.5, -0.5])}
    out["cond_tree"] = jit(lambda s, t: lax.cond(
        t > 0.5, lambda s: {"pos": s["pos"] + s["vel"], "vel": s["vel"]},
        lambda s: {"pos": s["pos"], "vel": -s["vel"]}, s))(state, 0.7)
    out["cond_no_operands"] = lax.cond(False, lambda: jnp.float32(1.0), lambda: jnp.float32(2.0))
    out["cond_int_pred"] = jit(lambda p, x: lax.cond(p, jnp.sin, jnp.cos, x))(0, 1.0)

    # switch with several operands
    branches = [lambda x, y: x + y, lambda x, y: x * y, lambda x, y: x - y]
    out["switch"] = [jit(lambda i, a, b: lax.switch(i, branches, a, b))(i, 3.0, 2.0)
                     for i in (-1, 0, 1, 2, 5)]
    out["switch_vmap"] = jax.vmap(lambda i, x: lax.switch(i, [jnp.sin, jnp.cos, jnp.tanh], x))(
        jnp.array([0, 1, 2, 1]), jnp.linspace(0.0, 1.0, 4))

    # while_loop with a pytree state
    def cond_fun(val):
        i, acc = val
        return jnp.logical_and(i < 10, acc["total"] < 20.0)

    def body_fun(val):
        i, acc = val
        return i + 1, {"total": acc["total"] + i, "last": jnp.float32(i)}
    out["while_tree"] = lax.while_loop(cond_fun, body_fun,
                                       (0, {"total": jnp.float32(0.0), "last": jnp.float32(-1.0)}))

    # fori_loop with traced bounds
    @jit
    def sum_range(lo, hi):
        return lax.fori_loop(lo, hi, lambda i, acc: acc + i, 0)
    out["fori_traced"] = sum_range(3, 10)
    out["fori_tuple"] = lax.fori_loop(0, 5, lambda i, c: (c[0] + i, c[1] * 2.0), (0, 1.0))
    out["fori_unroll"] = lax.fori_loop(0, 6, lambda i, x: x * 1.5 + i, 1.0, unroll=2)

    # scan: cumulative sums, xs=None with length, reverse, unroll, pytrees
    def cumsum_step(carry, x):
        carry = carry + x
        return carry, carry
    xs = jnp.arange(1.0, 6.0)
    out["scan_cumsum"] = lax.scan(cumsum_step, 0.0, xs)
    out["scan_reverse"] = lax.scan(cumsum_step, 0.0, xs, reverse=True)
    out["scan_unroll"] = lax.scan(cumsum_step, 0.0, xs, unroll=3)[1]
    out["scan_unroll_true"] = lax.scan(cumsum_step, 0.0, xs, unroll=True)[1]

    def fib_step(carry, _):
        a, b = carry
        return (b, a + b), a
    out["scan_none"] = lax.scan(fib_step, (0, 1), None, length=10)
    out["scan_none_ys"] = lax.scan(lambda c, x: (c * 2, None), 1.0, xs)

    def rnn_step(h, inputs):
        x, mask = inputs["x"], inputs["mask"]
        h_new = jnp.tanh(0.5 * h + x)
        h = jnp.where(mask, h_new, h)
        return h, {"h": h, "norm": jnp.sum(h ** 2)}
    seq = {"x": jnp.linspace(-1.0, 1.0, 12).reshape(4, 3),
           "mask": jnp.array([True, True, False, True])}
    out["scan_tree"] = jit(lambda h0, s: lax.scan(rnn_step, h0, s))(jnp.zeros(3), seq)
    out["scan_grad"] = grad(lambda w: lax.scan(lambda c, x: (c * w + x, c), 0.0, xs)[0])(0.9)
    out["fori_grad"] = grad(lambda w: lax.fori_loop(0, 4, lambda i, c: jnp.sin(c * w), 1.0))(0.5)
    out["scan_2d"] = lax.scan(lambda c, row: (c + row, c @ row), jnp.zeros(2),
                              jnp.arange(8.0).reshape(4, 2))

    # lax.map and associative_scan
    out["lax_map"] = lax.map(lambda x: jnp.sum(x ** 2), jnp.arange(12.0).reshape(4, 3))
    out["lax_map_tree"] = lax.map(lambda d: d["a"] * d["b"], {"a": jnp.arange(3.0),
                                                             "b": jnp.ones(3)})
    out["assoc_add"] = lax.associative_scan(jnp.add, jnp.arange(1, 9))
    out["assoc_max_rev"] = lax.associative_scan(jnp.maximum, jnp.array([1, 5, 2, 7, 3]),
                                                reverse=True)

    def affine_compose(a, b):
        (m1, c1), (m2, c2) = a, b
        return m2 * m1, m2 * c1 + c2
    ms, cs = jnp.array([0.5, 2.0, 1.0, 0.25]), jnp.array([1.0, -1.0, 0.5, 2.0])
    out["assoc_tree"] = lax.associative_scan(affine_compose, (ms, cs))
    out["cumulative"] = (jnp.cumsum(xs), jnp.cumprod(xs), lax.cummax(jnp.array([1, 3, 2, 5])),
                         lax.cumsum(xs, reverse=True), lax.cumlogsumexp(jnp.zeros(3)))

    # logical operators
    x = jnp.array([-1.0, 0.0, 2.0])
    out["logical"] = (jnp.logical_and(x > -1, x < 2), jnp.logical_or(x < 0, x > 1),
                      jnp.logical_not(x == 0), jnp.logical_xor(x > 0, x >= 0),
                      (x > 0) & (x < 3), ~(x > 0), (x < 0) | (x > 1))
    out["any_all"] = (jnp.any(x > 1), jnp.all(x > -2), bool(jnp.all(x > -2)))
    out["select_n"] = lax.select_n(jnp.array([0, 1, 2]), x, x * 10, x * 100)
    return out
