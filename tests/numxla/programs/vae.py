"""A variational autoencoder (MLP encoder and decoder, Bernoulli likelihood)
trained with a hand-written Adam, as in JAX's examples/mnist_vae.py."""


def main(jax):
    jnp, random, nn = jax.numpy, jax.random, jax.nn

    def dense_init(key, n_in, n_out):
        w_key, _ = random.split(key)
        w = nn.initializers.glorot_normal()(w_key, (n_in, n_out))
        return {"w": w, "b": jnp.zeros((n_out,))}

    def dense(p, x):
        return x @ p["w"] + p["b"]

    def init(key, x_dim=10, h_dim=8, z_dim=2):
        ks = random.split(key, 5)
        return {
            "enc": {"hidden": dense_init(ks[0], x_dim, h_dim),
                    "mean": dense_init(ks[1], h_dim, z_dim),
                    "logvar": dense_init(ks[2], h_dim, z_dim)},
            "dec": {"hidden": dense_init(ks[3], z_dim, h_dim),
                    "out": dense_init(ks[4], h_dim, x_dim)},
        }

    def encode(p, x):
        h = nn.softplus(dense(p["hidden"], x))
        return dense(p["mean"], h), dense(p["logvar"], h)

    def decode(p, z):
        return dense(p["out"], nn.relu(dense(p["hidden"], z)))

    def gaussian_kl(mu, logvar):
        return -0.5 * jnp.sum(1.0 + logvar - mu ** 2 - jnp.exp(logvar), axis=-1)

    def bernoulli_logpdf(logits, x):
        return -jnp.sum(jnp.logaddexp(0.0, jnp.where(x, -1.0, 1.0) * logits), axis=-1)

    def elbo(params, rng, images):
        mu, logvar = encode(params["enc"], images)
        eps = random.normal(rng, mu.shape)
        z = mu + jnp.exp(0.5 * logvar) * eps
        logits = decode(params["dec"], z)
        return jnp.mean(bernoulli_logpdf(logits, images) - gaussian_kl(mu, logvar))

    def adam_init(params):
        zeros = jax.tree_util.tree_map(jnp.zeros_like, params)
        return {"m": zeros, "v": zeros, "t": 0}

    def adam_update(grads, state, params, lr=0.01, b1=0.9, b2=0.999, eps=1e-8):
        t = state["t"] + 1
        m = jax.tree_util.tree_map(lambda m, g: b1 * m + (1 - b1) * g, state["m"], grads)
        v = jax.tree_util.tree_map(lambda v, g: b2 * v + (1 - b2) * g * g, state["v"], grads)
        mhat = jax.tree_util.tree_map(lambda m: m / (1 - b1 ** t), m)
        vhat = jax.tree_util.tree_map(lambda v: v / (1 - b2 ** t), v)
        params = jax.tree_util.tree_map(lambda p, m, v: p - lr * m / (jnp.sqrt(v) + eps),
                                        params, mhat, vhat)
        return params, {"m": m, "v": v, "t": t}

    key = random.key(42)
    data_key, init_key, train_key = random.split(key, 3)
    images = random.bernoulli(data_key, 0.3, (32, 10))
    params = init(init_key)
    state = adam_init(params)

    @jax.jit
    def step(params, state, rng):
        loss, grads = jax.value_and_grad(lambda p: -elbo(p, rng, images))(params)
        params, state = adam_update(grads, state, params)
        return params, state, loss

    losses = []
    for i in range(5):
        params, state, loss = step(params, state, random.fold_in(train_key, i))
        losses.append(loss)
    test_elbo = elbo(params, random.PRNGKey(7), images)
    n_params = sum(x.size for x in jax.tree_util.tree_leaves(params))
    return {
        "losses": jnp.stack(losses),
        "test_elbo": test_elbo,
        "n_params": n_params,
        "t": state["t"],
        "images_dtype": str(images.dtype),
        "dec_out_b": params["dec"]["out"]["b"],
        "tree": str(sorted(params["enc"].keys())),
    }
