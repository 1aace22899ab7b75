"""A convolutional classifier built with jax.example_libraries.stax and
trained with example_libraries.optimizers (Adam and momentum with a
schedule), as in JAX's examples/mnist_classifier.py, on synthetic images."""


def main(jax):
    import itertools

    import numpy.random as npr
    jnp, random = jax.numpy, jax.random
    from jax.example_libraries import optimizers, stax
    from jax.example_libraries.stax import (Conv, Dense, Dropout, Flatten, LogSoftmax, MaxPool,
                                            Relu)

    def loss(params, batch, rng=None):
        inputs, targets = batch
        preds = predict(params, inputs, rng=rng, mode="train")
        return -jnp.mean(jnp.sum(preds * targets, axis=1))

    def accuracy(params, batch):
        inputs, targets = batch
        target_class = jnp.argmax(targets, axis=1)
        predicted_class = jnp.argmax(predict(params, inputs), axis=1)
        return jnp.mean(predicted_class == target_class)

    init_random_params, predict_fn = stax.serial(
        Conv(4, (3, 3), padding="SAME"), Relu,
        MaxPool((2, 2), strides=(2, 2)), Flatten,
        Dense(16), Relu,
        Dense(3), LogSoftmax)

    def predict(params, inputs, rng=None, mode="test"):
        return predict_fn(params, inputs, rng=rng)

    rng = random.PRNGKey(0)
    data_rng = npr.RandomState(0)
    num_train, batch_size = 48, 12
    labels = data_rng.randint(0, 3, num_train)
    images = data_rng.randn(num_train, 6, 6, 1).astype("float32")
    images[:, :3, :3, 0] += (labels == 0)[:, None, None] * 2.0
    images[:, 3:, 3:, 0] += (labels == 1)[:, None, None] * 2.0
    images[:, :3, 3:, 0] += (labels == 2)[:, None, None] * 2.0
    train_labels = jnp.eye(3)[labels]
    num_batches = num_train // batch_size

    def data_stream():
        rng = npr.RandomState(1)
        while True:
            perm = rng.permutation(num_train)
            for i in range(num_batches):
                batch_idx = perm[i * batch_size:(i + 1) * batch_size]
                yield images[batch_idx], train_labels[batch_idx]
    batches = data_stream()

    opt_init, opt_update, get_params = optimizers.adam(step_size=0.01)

    @jax.jit
    def update(i, opt_state, batch):
        params = get_params(opt_state)
        return opt_update(i, jax.grad(loss)(params, batch), opt_state)

    out_shape, init_params = init_random_params(rng, (-1, 6, 6, 1))
    opt_state = opt_init(init_params)
    itercount = itertools.count()
    losses = []
    for epoch in range(2):
        for _ in range(num_batches):
            opt_state = update(next(itercount), opt_state, next(batches))
        params = get_params(opt_state)
        losses.append(loss(params, (images, train_labels)))

    # a second network with dropout and a momentum optimizer on a decaying schedule
    init2, apply2 = stax.serial(Flatten, Dense(8), stax.Tanh, Dropout(0.8), Dense(3),
                                stax.LogSoftmax)
    _, params2 = init2(random.PRNGKey(1), (-1, 6, 6, 1))
    schedule = optimizers.exponential_decay(0.1, decay_steps=2, decay_rate=0.5)
    opt_init2, opt_update2, get_params2 = optimizers.momentum(schedule, mass=0.9)
    state2 = opt_init2(params2)

    def loss2(p, batch, key):
        x, y = batch
        return -jnp.mean(jnp.sum(apply2(p, x, rng=key) * y, axis=1))

    for i in range(3):
        g = jax.grad(loss2)(get_params2(state2), (images, train_labels), random.PRNGKey(i))
        state2 = opt_update2(i, optimizers.clip_grads(g, 1.0), state2)
    packed = optimizers.unpack_optimizer_state(state2)
    restored = optimizers.pack_optimizer_state(packed)
    return {
        "out_shape": out_shape,
        "losses": jnp.stack(losses),
        "accuracy": accuracy(params, (images, train_labels)),
        "conv_bias_shape": params[0][1].shape,
        "n_leaves": len(jax.tree_util.tree_leaves(opt_state)),
        "dense2_b": get_params2(restored)[1][1],
        "l2": optimizers.l2_norm(get_params2(state2)),
        "schedule": [float(schedule(i)) for i in range(3)],
        "piecewise": optimizers.piecewise_constant([2, 4], [1.0, 0.5, 0.1])(3),
    }
