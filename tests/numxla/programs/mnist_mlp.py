"""An MLP classifier trained from scratch with SGD and momentum, in the style
of JAX's examples/mnist_classifier_fromscratch.py, on synthetic images."""


def main(jax):
    jnp, random = jax.numpy, jax.random
    from functools import partial

    def init_random_params(scale, layer_sizes, rng):
        keys = random.split(rng, len(layer_sizes) - 1)
        return [(scale * random.normal(k, (m, n)), scale * random.normal(k, (n,)))
                for k, m, n in zip(keys, layer_sizes[:-1], layer_sizes[1:])]

    def predict(params, inputs):
        activations = inputs
        for w, b in params[:-1]:
            outputs = jnp.dot(activations, w) + b
            activations = jnp.tanh(outputs)
        final_w, final_b = params[-1]
        logits = jnp.dot(activations, final_w) + final_b
        return logits - jax.nn.logsumexp(logits, axis=1, keepdims=True)

    def loss(params, batch):
        inputs, targets = batch
        preds = predict(params, inputs)
        return -jnp.mean(jnp.sum(preds * targets, axis=1))

    def accuracy(params, batch):
        inputs, targets = batch
        target_class = jnp.argmax(targets, axis=1)
        predicted_class = jnp.argmax(predict(params, inputs), axis=1)
        return jnp.mean(predicted_class == target_class)

    # synthetic "images": class-dependent means plus noise
    num_classes, dim, n = 4, 12, 64
    key = random.PRNGKey(0)
    k_means, k_x, k_y, k_init = random.split(key, 4)
    means = 2.0 * random.normal(k_means, (num_classes, dim))
    labels = random.randint(k_y, (n,), 0, num_classes)
    images = means[labels] + random.normal(k_x, (n, dim))
    targets = jax.nn.one_hot(labels, num_classes)

    layer_sizes = [dim, 16, num_classes]
    param_scale = 0.1
    step_size = 0.05
    momentum_mass = 0.9
    batch_size = 16
    num_batches = n // batch_size

    params = init_random_params(param_scale, layer_sizes, k_init)
    velocity = jax.tree_util.tree_map(jnp.zeros_like, params)

    @jax.jit
    def update(params, velocity, batch):
        grads = jax.grad(loss)(params, batch)
        velocity = [(momentum_mass * vw + gw, momentum_mass * vb + gb)
                    for (vw, vb), (gw, gb) in zip(velocity, grads)]
        params = [(w - step_size * vw, b - step_size * vb)
                  for (w, b), (vw, vb) in zip(params, velocity)]
        return params, velocity

    def data_stream(rng):
        perm = random.permutation(rng, n)
        for i in range(num_batches):
            batch_idx = perm[i * batch_size:(i + 1) * batch_size]
            yield images[batch_idx], targets[batch_idx]

    losses = []
    rng = random.PRNGKey(1)
    for epoch in range(3):
        rng, sub = random.split(rng)
        for batch in data_stream(sub):
            params, velocity = update(params, velocity, batch)
        losses.append(float(loss(params, (images, targets))))
    train_acc = accuracy(params, (images, targets))
    return {
        "losses": losses,
        "train_acc": train_acc,
        "first_w": params[0][0][:2, :3],
        "last_b": params[-1][1],
        "label_counts": jnp.bincount(labels, length=num_classes),
    }
