"""Structured control flow and debugging as the JAX docs show them:
lax.cond, lax.switch, lax.while_loop, lax.fori_loop, lax.select, jnp.where,
jnp.piecewise, vmap of cond, and jax.debug.print inside jit."""


def main(jax):
    import contextlib
    import io

    jnp, lax = jax.numpy, jax.lax

    @jax.jit
    def relu_or_square(x, flag):
        return lax.cond(flag, lambda v: jnp.maximum(v, 0.0), lambda v: v ** 2, x)

    def branch_fns():
        return [lambda x: x + 1.0, lambda x: x * 2.0, lambda x: -x]

    @jax.jit
    def pick(i, x):
        return lax.switch(i, branch_fns(), x)

    def collatz_steps(n):
        def cond(state):
            n, steps = state
            return n != 1

        def body(state):
            n, steps = state
            n = jnp.where(n % 2 == 0, n // 2, 3 * n + 1)
            return n, steps + 1
        return lax.while_loop(cond, body, (n, 0))[1]

    @jax.jit
    def noisy_sum(x):
        total = 0.0
        for i in range(3):
            total = total + x[i]
            jax.debug.print("step {i}: total={t}", i=i, t=total, ordered=True)
        jax.debug.print("x = {}", x, ordered=True)
        return total

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        s = noisy_sum(jnp.array([1.0, 2.0, 3.0]))
        jax.block_until_ready(s)
        jax.debug.print("eager {x}", x=jnp.int32(7))

    def piecewise(x):
        return jnp.piecewise(x, [x < 0, x >= 0], [lambda x: -x, lambda x: x ** 2])

    x = jnp.linspace(-2.0, 2.0, 5)
    factorial = lax.fori_loop(1, 6, lambda i, acc: acc * i, 1)
    return {
        "cond_true": relu_or_square(x, True),
        "cond_false": relu_or_square(x, False),
        "switch": jnp.stack([pick(i, 3.0) for i in range(3)]),
        "switch_clamped": pick(7, 3.0),
        "collatz": jax.vmap(collatz_steps)(jnp.array([6, 7, 27])),
        "collatz_jit": jax.jit(collatz_steps)(97),
        "printed": buf.getvalue(),
        "noisy_sum": s,
        "where3": jnp.where(x > 0, x, 0.0),
        "where1": jnp.where(x > 0)[0],
        "select": lax.select(x > 0, x, jnp.full_like(x, -1.0)),
        "piecewise": piecewise(x),
        "factorial": factorial,
        "vmap_cond": jax.vmap(lambda v: lax.cond(v > 0, jnp.sin, jnp.cos, v))(x),
        "grad_cond": jax.grad(lambda v: lax.cond(v > 0, lambda u: u ** 3, lambda u: -u, v))(2.0),
        "grad_fori": jax.grad(lambda v: lax.fori_loop(0, 3, lambda i, c: c * v, 1.0))(2.0),
        "clamp": lax.clamp(-1.0, x, 1.0),
    }
