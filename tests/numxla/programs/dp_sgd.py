"""Differentially private SGD: per-example gradients with vmap(grad), each
clipped to an L2 norm with tree_flatten/tree_unflatten, summed, noised and
averaged, after JAX's examples/differentially_private_sgd.py."""


def main(jax):
    from functools import partial

    jnp, random = jax.numpy, jax.random
    from_tu = jax.tree_util
    tree_flatten, tree_unflatten = from_tu.tree_flatten, from_tu.tree_unflatten

    def init_params(key, sizes):
        keys = random.split(key, len(sizes) - 1)
        return [{"w": random.normal(k, (m, n)) / jnp.sqrt(m), "b": jnp.zeros(n)}
                for k, m, n in zip(keys, sizes[:-1], sizes[1:])]

    def predict(params, inputs):
        x = inputs
        for layer in params[:-1]:
            x = jax.nn.relu(x @ layer["w"] + layer["b"])
        logits = x @ params[-1]["w"] + params[-1]["b"]
        return jax.nn.log_softmax(logits)

    def loss(params, batch):
        inputs, targets = batch
        logits = predict(params, inputs)
        return -jnp.mean(jnp.sum(logits * targets, axis=-1))

    def clipped_grad(params, l2_norm_clip, single_example_batch):
        grads = jax.grad(loss)(params, single_example_batch)
        nonempty_grads, tree_def = tree_flatten(grads)
        total_grad_norm = jnp.linalg.norm(
            jnp.array([jnp.linalg.norm(neg.ravel()) for neg in nonempty_grads]))
        divisor = jnp.maximum(total_grad_norm / l2_norm_clip, 1.)
        normalized_nonempty_grads = [g / divisor for g in nonempty_grads]
        return tree_unflatten(tree_def, normalized_nonempty_grads)

    def private_grad(params, batch, rng, l2_norm_clip, noise_multiplier, batch_size):
        clipped_grads = jax.vmap(clipped_grad, (None, None, 0))(params, l2_norm_clip, batch)
        clipped_grads_flat, grads_treedef = tree_flatten(clipped_grads)
        aggregated_clipped_grads = [g.sum(0) for g in clipped_grads_flat]
        rngs = random.split(rng, len(aggregated_clipped_grads))
        noised_aggregated_clipped_grads = [
            g + l2_norm_clip * noise_multiplier * random.normal(r, g.shape)
            for r, g in zip(rngs, aggregated_clipped_grads)]
        normalized_noised_aggregated_clipped_grads = [
            g / batch_size for g in noised_aggregated_clipped_grads]
        return tree_unflatten(grads_treedef, normalized_noised_aggregated_clipped_grads)

    batch_size, dim, classes = 8, 6, 3
    key = random.PRNGKey(3)
    k_data, k_labels, k_init, k_train = random.split(key, 4)
    inputs = random.normal(k_data, (batch_size * 4, dim))
    labels = random.randint(k_labels, (batch_size * 4,), 0, classes)
    targets = jax.nn.one_hot(labels, classes)
    params = init_params(k_init, [dim, 10, classes])

    @partial(jax.jit, static_argnums=(3,))
    def private_update(params, batch, rng, batch_size):
        grads = private_grad(params, batch, rng, 1.0, 0.5, batch_size)
        return jax.tree_util.tree_map(lambda p, g: p - 0.2 * g, params, grads)

    losses = []
    for step in range(6):
        i = step % 4
        batch = (inputs[i * batch_size:(i + 1) * batch_size, None],
                 targets[i * batch_size:(i + 1) * batch_size, None])
        params = private_update(params, batch, random.fold_in(k_train, step), batch_size)
        losses.append(loss(params, (inputs, targets)))
    per_example = jax.vmap(jax.grad(loss), in_axes=(None, 0))(
        params, (inputs[:4, None], targets[:4, None]))
    norms = jax.vmap(lambda g: jnp.sqrt(sum(jnp.vdot(x, x) for x in jax.tree_util.tree_leaves(g))))(
        per_example)
    return {"losses": jnp.array(losses), "params": params, "per_example_norms": norms,
            "w0_shape": str(per_example[0]["w"].shape)}
