"""Data-parallel training with pmap in the style of JAX's
examples/spmd_mnist_classifier_fromscratch.py: parameters replicated over
``jax.local_device_count()`` devices, batches sharded along a leading axis,
gradients summed with lax.psum over a named axis; plus pmap's other
arguments (in_axes with None, out_axes, static_broadcasted_argnums,
donate_argnums), per-device pytrees, and the collectives pmean, pmax,
all_gather and axis_index."""


def main(jax):
    from functools import partial

    import numpy as np
    import numpy.random as npr
    import jax.numpy as jnp
    from jax import grad, lax
    from jax.scipy.special import logsumexp
    from jax.tree_util import tree_map

    def init_random_params(scale, layer_sizes, rng=npr.RandomState(0)):
        return [(scale * rng.randn(m, n), scale * rng.randn(n))
                for m, n in zip(layer_sizes[:-1], layer_sizes[1:])]

    def predict(params, inputs):
        activations = inputs
        for w, b in params[:-1]:
            outputs = jnp.dot(activations, w) + b
            activations = jnp.tanh(outputs)
        final_w, final_b = params[-1]
        logits = jnp.dot(activations, final_w) + final_b
        return logits - logsumexp(logits, axis=1, keepdims=True)

    def loss(params, batch):
        inputs, targets = batch
        preds = predict(params, inputs)
        return -jnp.mean(jnp.sum(preds * targets, axis=1))

    @jax.jit
    def accuracy(params, batch):
        inputs, targets = batch
        target_class = jnp.argmax(targets, axis=1)
        predicted_class = jnp.argmax(predict(params, inputs), axis=1)
        return jnp.mean(predicted_class == target_class)

    # synthetic "images": 4 classes separated along random directions
    rng = npr.RandomState(1)
    num_train, num_pixels, num_classes = 64, 12, 4
    centers = rng.randn(num_classes, num_pixels)
    labels = rng.randint(0, num_classes, num_train)
    train_images = (centers[labels] + 0.5 * rng.randn(num_train, num_pixels)).astype(np.float32)
    train_labels = np.eye(num_classes, dtype=np.float32)[labels]

    layer_sizes = [num_pixels, 16, num_classes]
    param_scale = 0.1
    step_size = 0.05
    num_epochs = 3
    batch_size = 16

    num_devices = jax.local_device_count()
    num_batches = num_train // batch_size

    def data_stream():
        perm = npr.RandomState(0).permutation(num_train)
        for i in range(num_batches):
            batch_idx = perm[i * batch_size:(i + 1) * batch_size]
            images, labels = train_images[batch_idx], train_labels[batch_idx]
            # one shard of the batch per device
            per_device = images.shape[0] // num_devices
            images = images.reshape(num_devices, per_device, *images.shape[1:])
            labels = labels.reshape(num_devices, per_device, *labels.shape[1:])
            yield images, labels

    @partial(jax.pmap, axis_name="batch")
    def spmd_update(params, batch):
        grads = grad(loss)(params, batch)
        # the gradients of every device's shard, summed over the devices
        grads = [(lax.psum(dw, "batch"), lax.psum(db, "batch")) for dw, db in grads]
        return [(w - step_size * dw, b - step_size * db)
                for (w, b), (dw, db) in zip(params, grads)]

    init_params = init_random_params(param_scale, layer_sizes)
    replicate_array = lambda x: np.broadcast_to(x, (num_devices,) + x.shape)  # noqa: E731
    replicated_params = tree_map(replicate_array, init_params)

    accuracies = []
    for epoch in range(num_epochs):
        for batch in data_stream():
            replicated_params = spmd_update(replicated_params, batch)
        params = tree_map(lambda x: x[0], replicated_params)
        accuracies.append(accuracy(params, (train_images, train_labels)))

    out = {"accuracies": jnp.stack(accuracies), "w_last": params[-1][0],
           "b_first": params[0][1], "replicated_shape": replicated_params[0][0].shape,
           "param_dtype": str(replicated_params[0][0].dtype), "num_devices": num_devices,
           "loss": loss(params, (train_images, train_labels))}

    # pmap's other arguments
    xs = jnp.arange(num_devices * 3.0).reshape(num_devices, 3)
    scale = jnp.array([1.0, 2.0, 3.0])
    out["in_axes_none"] = jax.pmap(lambda x, s: x * s, in_axes=(0, None))(xs, scale)
    out["out_axes_none"] = jax.pmap(lambda x: lax.psum(x, "i"), axis_name="i",
                                    out_axes=None)(xs)
    out["static"] = jax.pmap(lambda x, n: x ** n, static_broadcasted_argnums=1)(xs, 2)
    out["donate"] = jax.pmap(lambda x: x + 1, donate_argnums=0)(jnp.ones((num_devices, 2)))

    @partial(jax.pmap, axis_name="d")
    def collectives(x):
        return {"pmean": lax.pmean(x, "d"), "pmax": lax.pmax(x, "d"),
                "gather": lax.all_gather(x, "d"), "index": lax.axis_index("d"),
                "normalized": x / lax.psum(jnp.sum(x), "d")}
    out["collectives"] = collectives(xs)

    # a pytree of per-device values (device_put_replicated's replacement)
    devices = jax.local_devices()
    rep = jax.device_put(jnp.stack([jnp.array([1.0, 2.0])] * len(devices)))
    out["replicated"] = (rep, rep.shape)
    sharded = jnp.stack([jnp.full((2,), float(i)) for i in range(len(devices))])
    params = {"w": 2.0 * jnp.ones((len(devices), 2)), "b": jnp.ones((len(devices), 2))}
    out["pmap_tree"] = jax.pmap(lambda p, x: p["w"] * x + p["b"])(params, sharded)
    out["pmap_of_vmap"] = jax.pmap(jax.vmap(lambda v: jnp.dot(v, v)))(
        jnp.arange(num_devices * 6.0).reshape(num_devices, 3, 2))
    out["pmap_grad"] = jax.pmap(jax.grad(lambda w, x: jnp.sum(jnp.tanh(w * x))))(
        jnp.ones((num_devices, 3)), xs)
    return out
