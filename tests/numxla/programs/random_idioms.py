"""jax.random as the "Pseudorandom numbers" docs use it: split/fold_in
idioms, vmapped samplers over keys, dropout, minibatch permutations, and the
common samplers' values for fixed keys."""


def main(jax):
    jnp, random = jax.numpy, jax.random

    key = random.PRNGKey(42)
    key, subkey = random.split(key)
    out = {"key": key, "subkey": subkey}
    out["normal"] = random.normal(subkey, (3,))
    keys = random.split(key, 4)
    out["vmap_uniform"] = jax.vmap(lambda k: random.uniform(k, (2,)))(keys)
    out["fold_in"] = random.fold_in(key, 17)
    out["new_key"] = random.key_data(random.key(0))
    out["split_3"] = random.key_data(random.split(random.key(1), 3))
    out["randint"] = random.randint(keys[0], (6,), 0, 10)
    out["choice"] = random.choice(keys[1], 5, (3,), replace=False)
    out["choice_p"] = random.choice(keys[1], jnp.arange(4), (5,), p=jnp.array([0.1, 0.2, 0.3, 0.4]))
    out["permutation"] = random.permutation(keys[2], 8)
    out["permute_rows"] = random.permutation(keys[2], jnp.arange(6).reshape(3, 2))
    out["bernoulli"] = random.bernoulli(keys[3], 0.3, (8,))
    out["categorical"] = random.categorical(keys[0], jnp.log(jnp.array([0.2, 0.3, 0.5])),
                                            shape=(6,))
    out["truncated_normal"] = random.truncated_normal(keys[1], -1.0, 1.0, (4,))
    out["exponential"] = random.exponential(keys[2], (3,))
    out["gumbel"] = random.gumbel(keys[3], (3,))
    out["uniform_range"] = random.uniform(keys[0], (3,), minval=-2.0, maxval=5.0)
    out["normal_f16"] = random.normal(keys[0], (2,), dtype=jnp.float16)
    out["mvn"] = random.multivariate_normal(keys[1], jnp.zeros(2),
                                            jnp.array([[2.0, 0.5], [0.5, 1.0]]), (3,))
    out["laplace"] = random.laplace(keys[2], (2,))
    out["bits"] = random.bits(keys[3], (3,))

    def dropout(key, x, rate):
        keep = random.bernoulli(key, 1.0 - rate, x.shape)
        return jnp.where(keep, x / (1.0 - rate), 0.0)

    @jax.jit
    def noisy_layer(key, x):
        k1, k2 = random.split(key)
        return dropout(k1, x, 0.5) + 0.1 * random.normal(k2, x.shape)
    out["jit_dropout"] = noisy_layer(random.PRNGKey(0), jnp.ones(6))

    # a loop threading a key, as training loops do
    def sample_walk(key, n):
        xs = []
        x = 0.0
        for _ in range(n):
            key, sub = random.split(key)
            x = x + random.normal(sub)
            xs.append(x)
        return jnp.stack(xs)
    out["walk"] = sample_walk(random.PRNGKey(5), 4)
    out["scan_keys"] = jax.lax.scan(lambda k, _: tuple(random.split(k)), random.PRNGKey(9),
                                    None, length=3)[1]
    out["dtypes"] = " ".join(str(a.dtype) for a in (out["normal"], out["randint"],
                                                    out["bernoulli"], out["key"], out["bits"]))
    return out
