"""A small convolutional network written with jax.lax directly: NHWC
convolutions with lax.conv_general_dilated, max and average pooling with
lax.reduce_window, a batch-norm by hand, and a few jitted SGD steps."""


def main(jax):
    jnp, lax, random = jax.numpy, jax.lax, jax.random

    def conv(x, w, stride=1):
        return lax.conv_general_dilated(x, w, (stride, stride), "SAME",
                                        dimension_numbers=("NHWC", "HWIO", "NHWC"))

    def max_pool(x):
        return lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")

    def avg_pool(x):
        return lax.reduce_window(x, 0.0, lax.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID") / 4.0

    def batch_norm(x, eps=1e-5):
        mean = jnp.mean(x, axis=(0, 1, 2), keepdims=True)
        var = jnp.var(x, axis=(0, 1, 2), keepdims=True)
        return (x - mean) * lax.rsqrt(var + eps)

    def init(key):
        k1, k2, k3 = random.split(key, 3)
        he = jax.nn.initializers.he_normal()
        return {"c1": he(k1, (3, 3, 1, 4)), "c2": he(k2, (3, 3, 4, 4)),
                "dense": jax.nn.initializers.lecun_normal()(k3, (4, 3)), "bias": jnp.zeros(3)}

    def forward(params, x):
        x = jax.nn.relu(batch_norm(conv(x, params["c1"])))
        x = max_pool(x)
        x = jax.nn.relu(conv(x, params["c2"]))
        x = avg_pool(x)
        x = jnp.mean(x, axis=(1, 2))
        return x @ params["dense"] + params["bias"]

    def loss(params, x, labels):
        logits = forward(params, x)
        return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * jax.nn.one_hot(labels, 3), axis=-1))

    key = random.PRNGKey(8)
    kx, kl, kp = random.split(key, 3)
    labels = random.randint(kl, (6,), 0, 3)
    # class-dependent blobs
    base = random.normal(kx, (6, 8, 8, 1))
    images = base + labels[:, None, None, None].astype(jnp.float32)
    params = init(kp)

    @jax.jit
    def step(params, x, labels):
        l, g = jax.value_and_grad(loss)(params, x, labels)
        return jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, g), l

    losses = []
    for _ in range(4):
        params, l = step(params, images, labels)
        losses.append(l)
    logits = forward(params, images)
    return {"losses": jnp.stack(losses), "logits_row": logits[0],
            "pred": jnp.argmax(logits, -1), "pool_shape": str(max_pool(images).shape),
            "conv_stride2": conv(images[:1], params["c1"], 2)[0, :2, :2, 0]}
