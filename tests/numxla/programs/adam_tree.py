"""An Adam optimiser written the way optax-style code is: state in
NamedTuples, updates with tree_map over nested dicts, lists, tuples and
namedtuples, global-norm clipping, weight decay masks from tree paths, and
the whole step under jit."""


def main(jax):
    from typing import NamedTuple

    jnp, random = jax.numpy, jax.random
    tu = jax.tree_util

    class Linear(NamedTuple):
        w: object
        b: object

    class AdamState(NamedTuple):
        count: object
        mu: object
        nu: object

    def init_model(key):
        k1, k2, k3 = random.split(key, 3)
        return {
            "encoder": [Linear(random.normal(k1, (4, 6)) * 0.5, jnp.zeros(6)),
                        Linear(random.normal(k2, (6, 6)) * 0.5, jnp.zeros(6))],
            "head": (Linear(random.normal(k3, (6, 1)) * 0.5, jnp.zeros(1)),),
            "scale": jnp.ones(()),
        }

    def model(params, x):
        for layer in params["encoder"]:
            x = jax.nn.gelu(x @ layer.w + layer.b)
        (head,) = params["head"]
        return params["scale"] * (x @ head.w + head.b)[..., 0]

    def loss_fn(params, x, y):
        return jnp.mean(optax_huber(model(params, x) - y))

    def optax_huber(err, delta=1.0):
        abs_err = jnp.abs(err)
        quadratic = jnp.minimum(abs_err, delta)
        return 0.5 * quadratic ** 2 + delta * (abs_err - quadratic)

    def adam_init(params):
        return AdamState(count=jnp.zeros([], jnp.int32),
                         mu=tu.tree_map(jnp.zeros_like, params),
                         nu=tu.tree_map(jnp.zeros_like, params))

    def global_norm(tree):
        return jnp.sqrt(sum(jnp.sum(jnp.square(x)) for x in tu.tree_leaves(tree)))

    def clip_by_global_norm(updates, max_norm):
        norm = global_norm(updates)
        trigger = norm < max_norm
        return tu.tree_map(lambda t: jnp.where(trigger, t, t / norm * max_norm), updates)

    def decay_mask(params):
        # no decay on biases and on scalars: decided from each leaf's path
        def keep(path, leaf):
            return not (leaf.ndim == 0 or "b" in tu.keystr(path)[-4:])
        return tu.tree_map_with_path(keep, params)

    def adam_update(grads, state, params, lr=0.05, b1=0.9, b2=0.999, eps=1e-8, wd=1e-2):
        grads = clip_by_global_norm(grads, 1.0)
        count = state.count + 1
        mu = tu.tree_map(lambda m, g: b1 * m + (1 - b1) * g, state.mu, grads)
        nu = tu.tree_map(lambda v, g: b2 * v + (1 - b2) * jnp.square(g), state.nu, grads)
        mu_hat = tu.tree_map(lambda m: m / (1 - b1 ** count), mu)
        nu_hat = tu.tree_map(lambda v: v / (1 - b2 ** count), nu)
        mask = decay_mask(params)
        updates = tu.tree_map(lambda m, v, p, k: -lr * (m / (jnp.sqrt(v) + eps)
                                                     + (wd * p if k else 0.0)),
                              mu_hat, nu_hat, params, mask)
        new_params = tu.tree_map(jnp.add, params, updates)
        return new_params, AdamState(count, mu, nu)

    @jax.jit
    def train_step(params, state, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        params, state = adam_update(grads, state, params)
        return params, state, loss

    key = random.PRNGKey(11)
    kx, kp = random.split(key)
    x = random.uniform(kx, (24, 4), minval=-1.0, maxval=1.0)
    y = jnp.sin(2 * x[:, 0]) * x[:, 1] + x[:, 2] ** 2
    params = init_model(kp)
    state = adam_init(params)
    losses = []
    for _ in range(8):
        params, state, loss = train_step(params, state, x, y)
        losses.append(loss)

    leaves, treedef = tu.tree_flatten(params)
    rebuilt = tu.tree_unflatten(treedef, [l * 0 + 1 for l in leaves])
    paths = [tu.keystr(p) for p, _ in tu.tree_flatten_with_path(params)[0]]
    return {
        "losses": jnp.stack(losses),
        "count": state.count,
        "scale": params["scale"],
        "head_w": params["head"][0].w[:, 0],
        "n_leaves": len(leaves),
        "num_leaves": treedef.num_leaves,
        "paths": "|".join(paths),
        "rebuilt_sum": sum(float(jnp.sum(l)) for l in tu.tree_leaves(rebuilt)),
        "types": str(type(rebuilt["head"][0]).__name__) + str(type(rebuilt["head"]).__name__),
        "mask": str(tu.tree_leaves(decay_mask(params))),
        "tree_reduce": tu.tree_reduce(lambda a, b: a + b, tu.tree_map(jnp.size, params)),
        "jax_tree_map": jax.tree.map(lambda a: a.shape, params["head"]),
        "none_leaf": str(tu.tree_structure({"a": None, "b": (1, 2)})),
    }
