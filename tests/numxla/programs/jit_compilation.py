"""JAX's "Just-in-time compilation" page and jit's API docs: side effects
that run only while tracing (prints, appends to a list), the trace cache
(same shapes reuse it, new shapes or dtypes retrace, weak-typed Python
scalars), static_argnums / static_argnames for Python control flow, the
errors of branching on traced values (TracerBoolConversionError,
ConcretizationTypeError) and of indexing with them, jax.ensure_compile_time_eval,
jit as a decorator with functools.partial, jit(...).lower(...) and
.compile(), donate_argnums, and caching by function identity."""


def main(jax):
    import contextlib
    import io
    from functools import partial

    import numpy as np
    import jax.numpy as jnp

    out = {}
    buf = io.StringIO()
    traces = []

    def selu(x, alpha=1.67, lambda_=1.05):
        traces.append(x.shape)
        return lambda_ * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)

    selu_jit = jax.jit(selu)
    x = jnp.arange(5.0)
    out["selu"] = selu_jit(x)
    selu_jit(x + 1)                       # same shape and dtype: no retrace
    selu_jit(jnp.arange(3.0))            # new shape: retrace
    selu_jit(jnp.arange(3))              # new dtype: retrace
    out["traces"] = [list(s) for s in traces]

    def f(x, y):
        print("Running f():")
        print(f"  x = {x.shape} {x.dtype}")
        print(f"  y = {y.shape} {y.dtype}")
        result = jnp.dot(x + 1, y + 1)
        print(f"  result = {result.shape} {result.dtype}")
        return result

    with contextlib.redirect_stdout(buf):
        x = np.random.RandomState(0).randn(3, 4)
        y = np.random.RandomState(1).randn(4)
        r1 = jax.jit(f)(x, y)
        jf = jax.jit(f)
        jf(x, y)
        jf(x, y)        # cached: no print
    out["prints"] = buf.getvalue()
    out["f"] = r1

    # Python control flow on traced values fails ...
    def g(x):
        if x > 0:
            return x
        return 2 * x
    errors = {}
    try:
        jax.jit(g)(10)
    except Exception as e:  # noqa: BLE001
        errors["if"] = type(e).__name__
        errors["if_is_concretization"] = isinstance(e, jax.errors.ConcretizationTypeError)
        errors["if_is_bool_conversion"] = isinstance(e, jax.errors.TracerBoolConversionError)

    def g2(x, n):
        i = 0
        while i < n:
            i += 1
        return x + i
    try:
        jax.jit(g2)(10, 20)
    except jax.errors.TracerBoolConversionError as e:
        errors["while"] = type(e).__name__

    def g3(x):
        return jnp.zeros(x)
    try:
        jax.jit(g3)(3)
    except Exception as e:  # noqa: BLE001
        errors["shape"] = type(e).__name__
    try:
        jax.jit(lambda x, i: jnp.arange(10)[:i] + x)(1, 3)
    except Exception as e:  # noqa: BLE001
        errors["slice"] = type(e).__name__
    try:
        jax.jit(lambda x: int(x))(1.5)
    except Exception as e:  # noqa: BLE001
        errors["int"] = type(e).__name__
    out["errors"] = errors

    # ... unless the argument is static
    out["static_argnums"] = jax.jit(g, static_argnums=0)(10)
    out["static_argnames"] = jax.jit(g2, static_argnames=["n"])(10, n=20)
    g2_jit_correct = jax.jit(g2, static_argnums=1)
    out["static_positional"] = g2_jit_correct(10, 20)

    @partial(jax.jit, static_argnames=["n"])
    def g2_jit_decorated(x, n):
        i = 0
        while i < n:
            i += 1
        return x + i
    out["static_decorated"] = g2_jit_decorated(10, 20)

    counts = []

    @partial(jax.jit, static_argnums=(1,))
    def power(x, n):
        counts.append(n)
        return x ** n
    out["static_cache"] = [power(jnp.float32(2.0), n) for n in (2, 3, 2, 3)]
    out["static_trace_count"] = counts

    # the value of a traced argument's shape is static, its values are not
    @jax.jit
    def reshape_by_shape(x):
        return x.reshape((np.prod(x.shape),))
    out["np_prod_shape"] = reshape_by_shape(jnp.ones((2, 3)))

    @jax.jit
    def compile_time(x):
        with jax.ensure_compile_time_eval():
            y = jnp.sin(jnp.float32(1.0)) * 2   # computed while tracing, a concrete value
            table = jnp.arange(4) ** 2
        return x * y + table[int(y)]
    out["ensure_compile_time_eval"] = compile_time(jnp.ones(2))

    # lowering and compiling ahead of time
    lowered = jax.jit(selu).lower(jnp.ones(3))
    out["lower_text_is_str"] = isinstance(lowered.as_text(), str)
    compiled = lowered.compile()
    out["compiled"] = compiled(jnp.arange(3.0) - 1)
    try:
        compiled(jnp.ones(4))
    except Exception as e:  # noqa: BLE001
        out["compiled_wrong_shape"] = type(e).__name__

    # donation, jit of a lambda each call (retraces), and pytrees
    @partial(jax.jit, donate_argnums=0)
    def update(params, g):
        return jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, g)
    params = {"w": jnp.ones(3), "b": jnp.zeros(())}
    out["donated"] = update(params, {"w": jnp.arange(3.0), "b": jnp.ones(())})
    lambda_traces = []
    for _ in range(2):
        jax.jit(lambda v: lambda_traces.append(1) or v + 1)(1.0)
    out["lambda_retraces"] = len(lambda_traces)
    out["jit_kwargs"] = jax.jit(selu)(jnp.array([-1.0, 1.0]), alpha=2.0, lambda_=1.0)
    out["weak_scalar"] = str(jax.jit(lambda v: v * 2)(3.0).dtype)
    return out
