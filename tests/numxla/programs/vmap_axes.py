"""JAX's "Automatic vectorization" page and vmap's API docs: in_axes as
ints, None, negative axes, dicts and nested tuples, out_axes (None, negative,
pytrees), nested vmap for pairwise distances, axis_size, per-example
gradients of a linear model, vmap of jit of vmap, and collectives on a
named axis (psum, pmax, axis_index, all_gather)."""


def main(jax):
    import jax.numpy as jnp
    from jax import lax

    out = {}
    x = jnp.arange(5.0)
    w = jnp.array([2.0, 3.0, 4.0])

    def convolve(x, w):
        output = []
        for i in range(1, len(x) - 1):
            output.append(jnp.dot(x[i - 1:i + 2], w))
        return jnp.array(output)

    xs = jnp.stack([x, x + 1])
    ws = jnp.stack([w, w])
    out["manual_batch"] = jnp.stack([convolve(xs[i], ws[i]) for i in range(2)])
    out["auto"] = jax.vmap(convolve)(xs, ws)
    out["in_axes_1"] = jax.vmap(convolve, in_axes=1, out_axes=1)(jnp.transpose(xs),
                                                                 jnp.transpose(ws))
    out["in_axes_none"] = jax.vmap(convolve, in_axes=[0, None])(xs, w)
    out["jit_vmap"] = jax.jit(jax.vmap(convolve, in_axes=[0, None]))(xs, w)

    # in_axes over pytrees, negative axes, out_axes
    def f(params, x):
        return params['w'] @ x + params['b']
    params = {'w': jnp.arange(6.0).reshape(2, 3), 'b': jnp.array([1.0, -1.0])}
    batch = jnp.arange(12.0).reshape(3, 4)
    out["dict_axes"] = jax.vmap(f, in_axes=({'w': None, 'b': None}, -1))(params, batch)
    out["out_axes_1"] = jax.vmap(f, in_axes=(None, 1), out_axes=1)(params, batch)
    stacked = {'w': jnp.stack([params['w'], 2 * params['w']]), 'b': params['b']}
    out["mixed_dict"] = jax.vmap(f, in_axes=({'w': 0, 'b': None}, None))(stacked, batch[:, 0])
    out["tuple_axes"] = jax.vmap(lambda ab, c: ab[0] * ab[1] + c,
                                 in_axes=((0, 1), None))((jnp.ones((2, 3)),
                                                          jnp.arange(6.0).reshape(3, 2)), 5.0)
    out["out_axes_none"] = jax.vmap(lambda a: (a * 2, jnp.float32(7.0)),
                                    out_axes=(0, None))(jnp.arange(3.0))
    out["out_axes_neg"] = jax.vmap(lambda a: jnp.outer(a, a), out_axes=-1)(
        jnp.arange(6.0).reshape(2, 3)).shape
    out["axis_size"] = jax.vmap(lambda: jnp.ones(2), axis_size=3)()
    out["kwargs_batched"] = jax.vmap(lambda a, scale=1.0: a * scale)(jnp.arange(3.0),
                                                                    scale=jnp.arange(3.0))

    # nested vmap: pairwise distances
    def dist(a, b):
        return jnp.sqrt(jnp.sum((a - b) ** 2))
    pts = jnp.array([[0.0, 0.0], [3.0, 4.0], [1.0, 1.0]])
    out["pairwise"] = jax.vmap(jax.vmap(dist, (None, 0)), (0, None))(pts, pts)
    out["mv_vmap"] = jax.vmap(jnp.dot, in_axes=(0, None))(params['w'], jnp.ones(3))
    out["vv_matmul"] = jax.vmap(jax.vmap(jnp.vdot, (None, 1)), (0, None))(
        params['w'], jnp.ones((3, 4)))

    # per-example gradients
    def predict(theta, xi):
        return jnp.dot(theta[:-1], xi) + theta[-1]

    def example_loss(theta, xi, yi):
        return (predict(theta, xi) - yi) ** 2
    theta = jnp.array([0.5, -0.25, 0.1])
    X = jnp.linspace(-1.0, 1.0, 8).reshape(4, 2)
    y = jnp.array([1.0, 0.0, -1.0, 0.5])
    per_example = jax.vmap(jax.grad(example_loss), in_axes=(None, 0, 0))(theta, X, y)
    out["per_example"] = per_example
    out["per_example_mean"] = jnp.allclose(
        per_example.mean(0), jax.grad(lambda t: jnp.mean(jax.vmap(example_loss, (None, 0, 0))(
            t, X, y)))(theta))
    out["vmap_jacfwd"] = jax.vmap(jax.jacfwd(lambda v: jnp.sin(v) * v))(X)
    out["vmap_of_jit"] = jax.vmap(jax.jit(lambda v: jnp.sort(v)[::-1]))(batch)
    out["vmap_vmap_jit"] = jax.jit(jax.vmap(jax.vmap(lambda a: a ** 2 + 1)))(batch)

    # collectives over a named axis
    def normalize(v):
        return v / lax.psum(v, axis_name='i')
    out["psum"] = jax.vmap(normalize, axis_name='i')(jnp.arange(1.0, 5.0))
    out["pmax_index"] = jax.vmap(lambda v: (lax.pmax(v, 'b'), lax.axis_index('b')),
                                 axis_name='b')(jnp.array([3.0, 7.0, 1.0]))
    out["pmean"] = jax.vmap(lambda v: v - lax.pmean(v, 'k'), axis_name='k')(x)
    out["all_gather"] = jax.vmap(lambda v: lax.all_gather(v, 'g'), axis_name='g')(x[:3])
    out["nested_names"] = jax.vmap(jax.vmap(lambda v: lax.psum(v, ('r', 'c')), axis_name='c'),
                                   axis_name='r')(jnp.arange(6.0).reshape(2, 3))
    out["vmap_method"] = jax.vmap(lambda m: m.sum(axis=0).T @ m)(batch.reshape(3, 2, 2))
    out["vmap_index"] = jax.vmap(lambda v, i: v[i])(batch, jnp.array([0, 3, 1]))
    out["vmap_dynamic_slice"] = jax.vmap(lambda v, i: lax.dynamic_slice(v, (i,), (2,)))(
        batch, jnp.array([0, 3, 1]))
    out["vmap_at"] = jax.vmap(lambda v, i: v.at[i].set(0.0))(batch, jnp.array([0, 3, 1]))
    return out
