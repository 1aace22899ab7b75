"""JAX's "Working with pytrees" page: tree_map over several trees,
custom nodes registered with register_pytree_node, register_pytree_node_class
and register_dataclass, None and is_leaf, tree_transpose, tree_reduce,
key paths of custom nodes, jax.tree's functions, Partial, and
flatten_util.ravel_pytree feeding an optimiser."""


def main(jax):
    import dataclasses
    import functools
    from typing import NamedTuple

    import jax.numpy as jnp
    from jax import tree_util
    from jax.flatten_util import ravel_pytree

    out = {}
    example_trees = [
        [1, 'a', object()],
        (1, (2, 3), ()),
        [1, {'k1': 2, 'k2': (3, 4)}, 5],
        {'a': 2, 'b': (2, 3)},
        jnp.array([1, 2, 3]),
    ]
    out["leaf_counts"] = [len(jax.tree.leaves(t)) for t in example_trees]
    list_of_lists = [[1, 2, 3], [1, 2], [1, 2, 3, 4]]
    out["tree_map"] = jax.tree.map(lambda x: x * 2, list_of_lists)
    another_list_of_lists = list_of_lists
    out["tree_map2"] = jax.tree.map(lambda x, y: x + y, list_of_lists, another_list_of_lists)

    # an MLP's parameters as a list of dicts
    def init_mlp_params(layer_widths):
        params = []
        for n_in, n_out in zip(layer_widths[:-1], layer_widths[1:]):
            params.append(dict(weights=jnp.linspace(-1.0, 1.0, n_in * n_out).reshape(n_in, n_out)
                               * jnp.sqrt(2 / n_in),
                               biases=jnp.ones(shape=(n_out,))))
        return params

    params = init_mlp_params([1, 8, 8, 1])
    out["shapes"] = str(jax.tree.map(lambda x: x.shape, params))

    def forward(params, x):
        *hidden, last = params
        for layer in hidden:
            x = jax.nn.relu(x @ layer['weights'] + layer['biases'])
        return x @ last['weights'] + last['biases']

    def loss_fn(params, x, y):
        return jnp.mean((forward(params, x) - y) ** 2)

    LEARNING_RATE = 0.0001

    @jax.jit
    def update(params, x, y):
        grads = jax.grad(loss_fn)(params, x, y)
        return jax.tree.map(lambda p, g: p - LEARNING_RATE * g, params, grads)

    xs = jnp.linspace(-1.0, 1.0, 16).reshape(16, 1)
    ys = xs ** 2
    for _ in range(5):
        params = update(params, xs, ys)
    out["mlp_loss"] = loss_fn(params, xs, ys)

    # custom pytree nodes
    class MyContainer:
        """A named container."""

        def __init__(self, name: str, a: int, b: int, c: int):
            self.name = name
            self.a = a
            self.b = b
            self.c = c

    def flatten_MyContainer(container):
        flat_contents = [container.a, container.b, container.c]
        aux_data = container.name
        return flat_contents, aux_data

    def unflatten_MyContainer(aux_data, flat_contents):
        return MyContainer(aux_data, *flat_contents)

    tree_util.register_pytree_node(MyContainer, flatten_MyContainer, unflatten_MyContainer)
    containers = [MyContainer('Alice', 1, 2, 3), MyContainer('Bob', 4, 5, 6)]
    out["custom_leaves"] = jax.tree.leaves(containers)
    mapped = jax.tree.map(lambda x: x + 1, containers)
    out["custom_map"] = [(c.name, c.a, c.b, c.c) for c in mapped]

    @tree_util.register_pytree_node_class
    class Special:
        def __init__(self, x, y):
            self.x = x
            self.y = y

        def tree_flatten(self):
            return ((self.x, self.y), None)

        @classmethod
        def tree_unflatten(cls, aux_data, children):
            return cls(*children)

        def norm(self):
            return jnp.sqrt(self.x ** 2 + self.y ** 2)

    sp = Special(jnp.array(3.0), jnp.array(4.0))
    out["class_norm"] = jax.jit(lambda s: s.norm())(sp)
    g = jax.grad(lambda s: s.norm())(sp)
    out["class_grad"] = (type(g).__name__, g.x, g.y)

    @functools.partial(jax.tree_util.register_dataclass, data_fields=['x', 'y'],
                       meta_fields=['op'])
    @dataclasses.dataclass
    class MyDataclass:
        x: jnp.ndarray
        y: jnp.ndarray
        op: str

    dc = MyDataclass(jnp.ones(2), jnp.arange(2.0), 'add')
    out["dataclass_leaves"] = jax.tree.leaves(dc)
    out["dataclass_jit"] = jax.jit(lambda d: d.x + d.y if d.op == 'add' else d.x - d.y)(dc)

    @jax.tree_util.register_dataclass
    @dataclasses.dataclass
    class Auto:
        w: jnp.ndarray
        n: int = dataclasses.field(metadata=dict(static=True))

    au = jax.tree.map(lambda v: v * 2, Auto(jnp.ones(3), 3))
    out["dataclass_static"] = (au.w, au.n, jax.tree.structure(au).num_leaves)

    class MyOtherContainer(NamedTuple):
        name: str
        a: int
        b: int
        c: int

    out["namedtuple_leaves"] = jax.tree.leaves([MyOtherContainer('Alice', 1, 2, 3),
                                                MyOtherContainer('Bob', 4, 5, 6)])
    # None is an empty subtree; is_leaf stops the recursion
    out["none_leaves"] = jax.tree.leaves([None, None, None])
    out["none_map"] = jax.tree.map(lambda x: x, [None, 1, (None, 2)]) == [None, 1, (None, 2)]
    out["is_leaf"] = jax.tree.map(lambda x: len(x), [[1, 2], (3,), [4, 5, 6]],
                                  is_leaf=lambda x: isinstance(x, list))
    out["none_is_leaf"] = jax.tree.leaves([None, 1], is_leaf=lambda x: x is None)[:1] == [None]

    # transposing trees
    def tree_transpose(list_of_trees):
        return jax.tree.map(lambda *xs: list(xs), *list_of_trees)

    episode_steps = [dict(t=1, obs=3), dict(t=2, obs=4)]
    out["transpose_map"] = tree_transpose(episode_steps)
    out["transpose_api"] = jax.tree.transpose(
        outer_treedef=jax.tree.structure([0 for e in episode_steps]),
        inner_treedef=jax.tree.structure(episode_steps[0]),
        pytree_to_transpose=episode_steps)
    out["tree_util_transpose"] = tree_util.tree_transpose(
        tree_util.tree_structure([0, 0]), tree_util.tree_structure((0, 0)), [(1, 2), (3, 4)])
    out["reduce"] = jax.tree.reduce(lambda a, b: a + b, {'x': 1, 'y': [2, 3]}, initializer=10)
    out["reduce_max"] = tree_util.tree_reduce(max, [4, (9, 2)])
    out["all"] = (tree_util.tree_all([True, (1, 2)]), jax.tree.all({'a': 0, 'b': 1}))

    # key paths
    tree = [1, {'k1': 2, 'k2': (3, 4)}, MyOtherContainer('x', 5, 6, 7)]
    flat, treedef = jax.tree_util.tree_flatten_with_path(tree)
    out["keystrs"] = [jax.tree_util.keystr(path) for path, _ in flat]
    out["path_types"] = [type(k).__name__ for path, _ in flat for k in path][:6]
    out["map_with_path"] = jax.tree_util.tree_map_with_path(
        lambda p, v: v * 10 if jax.tree_util.keystr(p).startswith('[1]') else v, tree[:2])
    out["treedef_str"] = str(treedef.num_leaves) + " " + str(treedef.num_nodes)
    out["children"] = len(jax.tree.structure({'a': 1, 'b': (2, 3)}).children())
    out["flatten_up_to"] = jax.tree.structure([0, 0]).flatten_up_to([(1, 2), {'a': 3}])
    out["unflatten"] = jax.tree.unflatten(jax.tree.structure((0, [0, 0])), [7, 8, 9])

    # Partial is a pytree: it can cross jit
    def add3(a, b, c):
        return a + b * c
    part = tree_util.Partial(add3, jnp.array(1.0), c=jnp.array(3.0))
    out["partial"] = jax.jit(lambda p, b: p(b))(part, jnp.array(2.0))
    out["partial_leaves"] = len(jax.tree.leaves(part))

    # ravel_pytree: a flat vector of every leaf and the function that undoes it
    tree_params = {'w': jnp.ones((2, 3)), 'b': jnp.zeros(3), 'scale': jnp.array(2.0)}
    flat_params, unravel = ravel_pytree(tree_params)
    grads_flat = jax.grad(lambda v: jnp.sum(unravel(v)['w'] * unravel(v)['scale']) +
                          jnp.sum(unravel(v)['b'] ** 2))(flat_params)
    new_tree = unravel(flat_params - 0.1 * grads_flat)
    out["ravel"] = (flat_params, new_tree, str(flat_params.dtype))
    mixed_flat, _ = ravel_pytree((jnp.ones(2, jnp.float16), jnp.arange(2)))
    out["ravel_mixed"] = (mixed_flat, str(mixed_flat.dtype))
    out["ravel_empty"] = ravel_pytree([])[0].shape
    return out
