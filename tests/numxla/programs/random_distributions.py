"""JAX's "Pseudorandom numbers" page and jax.random's API docs beyond the
basics: new-style typed keys (random.key, key_data, wrap_key_data,
key_impl, jnp.issubdtype with dtypes.prng_key, keys in arrays, vmap over a
batch of keys, keys in pytrees and under jit), split with a shape, fold_in
in a loop, bits of several widths, shapes and dtypes of the samplers, the
gamma family with reparameterisation gradients (gamma, beta, dirichlet),
and the count samplers binomial, multinomial and poisson."""


def main(jax):
    import jax.numpy as jnp
    from jax import random

    out = {}
    # typed keys
    key = random.key(1701)
    out["typed_key"] = (key.shape, str(key.dtype), str(random.key_impl(key)),
                        jnp.issubdtype(key.dtype, jax.dtypes.prng_key))
    out["typed_key_data"] = random.key_data(key)
    raw = random.PRNGKey(1701)
    out["raw_key"] = (raw, str(raw.dtype), jnp.issubdtype(raw.dtype, jax.dtypes.prng_key))
    out["same_draws"] = bool(jnp.all(random.normal(key, (3,)) == random.normal(raw, (3,))))
    wrapped = random.wrap_key_data(random.key_data(key))
    out["wrap_roundtrip"] = random.key_data(random.split(wrapped)[1])
    keys = random.split(key, (2, 3))
    out["split_shape"] = (keys.shape, random.key_data(keys).shape)
    out["split_data"] = random.key_data(keys[1, 2])
    out["vmap_keys"] = jax.vmap(lambda k: random.uniform(k, (2,)))(random.split(key, 3))
    out["vmap_2d_keys"] = jax.vmap(jax.vmap(lambda k: random.randint(k, (), 0, 100)))(keys)
    out["keys_in_tree"] = jax.jit(lambda d: {"k": random.split(d["k"])[0],
                                             "x": random.normal(d["k"]) + d["x"]})(
        {"k": key, "x": jnp.ones(())})["x"]
    out["jit_typed_key"] = random.key_data(jax.jit(lambda k: random.fold_in(k, 3))(key))

    # fold_in: a key per step or per example from one base key
    base = random.key(0)
    out["fold_in_loop"] = jnp.stack([random.normal(random.fold_in(base, i)) for i in range(4)])
    out["fold_in_vmap"] = jax.vmap(lambda i: random.normal(random.fold_in(base, i)))(
        jnp.arange(4))
    out["split_unpack"] = random.key_data(jnp.stack(list(random.split(base, 3))))

    # bits, shapes and dtypes
    out["bits8"] = random.bits(raw, (4,), jnp.uint8)
    out["bits16"] = random.bits(raw, (2, 2), jnp.uint16)
    out["bits32"] = random.bits(raw, (3,))
    out["uniform_f16"] = random.uniform(raw, (3,), jnp.float16)
    out["randint_u8"] = random.randint(raw, (5,), 0, 200, dtype=jnp.uint8)
    out["randint_array_bounds"] = random.randint(raw, (3,), jnp.array([0, 10, 100]),
                                                 jnp.array([5, 20, 1000]))
    out["normal_shapes"] = [random.normal(raw, s).shape for s in ((), (0,), (2, 3))]
    out["rademacher"] = random.rademacher(raw, (6,))
    out["dtypes"] = " ".join(str(a.dtype) for a in (
        out["bits8"], out["bits16"], out["uniform_f16"], out["randint_u8"], out["rademacher"]))

    # the gamma family, and gradients through the samples (implicit
    # reparameterisation), as variational-inference code uses them
    k1, k2, k3 = random.split(raw, 3)
    out["gamma"] = random.gamma(k1, jnp.array([0.5, 1.0, 3.0]))
    out["gamma_shape"] = random.gamma(k1, 2.0, (2, 2))
    out["beta"] = random.beta(k2, 2.0, jnp.array([1.0, 5.0]))
    out["dirichlet"] = random.dirichlet(k3, jnp.array([1.0, 2.0, 3.0]), (2,))
    out["grad_gamma"] = jax.grad(lambda a: jnp.sum(random.gamma(k1, a, (4,))))(2.0)
    out["grad_gamma_vec"] = jax.grad(lambda a: jnp.sum(random.gamma(k1, a)))(
        jnp.array([0.5, 1.0, 3.0]))
    out["grad_beta"] = jax.grad(lambda a, b: jnp.sum(random.beta(k2, a, b, (3,))),
                                argnums=(0, 1))(2.0, 3.0)
    out["grad_dirichlet"] = jax.jacobian(lambda al: random.dirichlet(k3, al))(
        jnp.array([1.0, 2.0, 3.0]))

    def moment_loss(log_alpha):
        samples = random.gamma(k2, jnp.exp(log_alpha), (32,))
        return (jnp.mean(samples) - 2.0) ** 2
    log_alpha = jnp.array(0.0)
    for _ in range(3):
        log_alpha = log_alpha - 0.2 * jax.grad(moment_loss)(log_alpha)
    out["gamma_fit"] = log_alpha

    # counts
    out["binomial"] = random.binomial(k1, 10, jnp.array([0.1, 0.5, 0.9]))
    out["binomial_shape"] = random.binomial(k2, jnp.array([5.0, 50.0]), 0.3, (3, 2))
    out["multinomial"] = random.multinomial(k3, 20, jnp.array([0.2, 0.3, 0.5]))
    out["multinomial_batch"] = random.multinomial(k1, jnp.array([5.0, 10.0]),
                                                  jnp.array([0.5, 0.5]), shape=(2, 2))
    out["poisson"] = random.poisson(k2, jnp.array([0.5, 4.0, 30.0]))
    out["count_dtypes"] = " ".join(str(out[n].dtype) for n in (
        "binomial", "multinomial", "poisson"))
    return out
