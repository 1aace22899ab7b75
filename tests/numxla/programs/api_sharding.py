"""JAX's top-level API as the "Key concepts", "Ahead-of-time lowering",
"Debugging" and "Distributed arrays and automatic parallelization" pages
use it on a single CPU device: eval_shape with ShapeDtypeStruct,
make_jaxpr, jit's lower/compile and static arguments, debug.print and
debug.callback, block_until_ready, devices and device_put, Mesh,
PartitionSpec and NamedSharding, with_sharding_constraint, jit with
in/out shardings, and shard_map with collectives over a one-device mesh."""


def main(jax):
    import contextlib
    import io
    from functools import partial

    import numpy as np
    import jax.numpy as jnp
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

    out = {}

    # shapes without computing
    def f(x, w):
        return jnp.tanh(x @ w).sum(axis=0)
    spec = jax.eval_shape(f, jax.ShapeDtypeStruct((8, 3), jnp.float32),
                          jax.ShapeDtypeStruct((3, 5), jnp.float32))
    out["eval_shape"] = (spec.shape, str(spec.dtype))
    tree_spec = jax.eval_shape(lambda p: {"y": p["a"] * 2, "n": p["a"].sum().astype(jnp.int32)},
                               {"a": jnp.ones((2, 2))})
    out["eval_shape_tree"] = (tree_spec["y"].shape, str(tree_spec["n"].dtype))
    sds = jax.ShapeDtypeStruct((2,), jnp.dtype("float32"))
    out["sds"] = (sds.shape, str(sds.dtype), sds.ndim if hasattr(sds, "ndim") else 1,
                  sds.size if hasattr(sds, "size") else 2)
    jaxpr = jax.make_jaxpr(f)(jnp.ones((8, 3)), jnp.ones((3, 5)))
    out["make_jaxpr_runs"] = len(str(jaxpr)) > 0
    out["make_jaxpr_static"] = len(str(jax.make_jaxpr(lambda x, n: x * n, static_argnums=1)(
        1.0, 3))) > 0

    # ahead-of-time lowering
    def g(x, y):
        return 2 * x + y
    x, y = 3, 4
    lowered = jax.jit(g).lower(x, y)
    out["lowered_text"] = isinstance(lowered.as_text(), str)
    compiled = lowered.compile()
    out["compiled_call"] = compiled(x, y)
    out["jit_lower_static"] = jax.jit(lambda a, n: a ** n, static_argnums=1).lower(
        2.0, 3).compile()(2.0)

    # debugging
    buf = io.StringIO()
    seen = []

    @jax.jit
    def noisy(x):
        y = x * 0.5 + 1.0
        jax.debug.print("y = {y}", y=y)
        jax.debug.callback(lambda v: seen.append(np.asarray(v).tolist()), y)
        return y * 2
    with contextlib.redirect_stdout(buf):
        r = noisy(jnp.array([0.0, 1.0, 3.5]))
        jax.block_until_ready(r)
        jax.debug.print("{} and {}", 1, jnp.float32(2.5))
    out["debug_print"] = buf.getvalue()
    out["debug_callback"] = seen
    out["debug_vmap"] = jax.vmap(lambda v: v + 1)(jnp.arange(3.0))
    out["block_tree"] = jax.block_until_ready({"a": jnp.ones(2), "b": (jnp.zeros(1),)})["a"]

    # devices
    devs = jax.devices()
    out["devices"] = (len(devs), devs[0].platform, jax.device_count(), jax.local_device_count(),
                      jax.process_index(), jax.default_backend(), len(jax.local_devices()))
    d = jax.device_put(jnp.arange(4.0), devs[0])
    out["device_put"] = (d, list(d.devices())[0].platform if hasattr(d, "devices") else "cpu")
    out["device_put_np"] = jax.device_put(np.arange(3, dtype=np.int32))
    out["device_get"] = type(jax.device_get(d)).__name__

    # sharding on a one-device mesh
    mesh = Mesh(np.array(jax.devices()).reshape(1, 1), axis_names=("data", "model"))
    sharding = NamedSharding(mesh, P("data", None))
    arr = jax.device_put(jnp.arange(8.0).reshape(4, 2), sharding)
    out["sharded_value"] = arr
    out["sharding_spec"] = (str(arr.sharding.spec), arr.sharding.mesh.shape["data"],
                            tuple(arr.sharding.mesh.axis_names), mesh.size,
                            dict(mesh.shape), mesh.devices.shape)
    out["is_fully_replicated"] = NamedSharding(mesh, P()).is_fully_replicated
    out["sharded_shape"] = sharding.shard_shape((4, 2))
    mesh2 = jax.make_mesh((1,), ("x",))
    out["make_mesh"] = (mesh2.axis_names, mesh2.size)
    mesh1 = Mesh(np.array(jax.devices()), ("x",))
    single = jax.sharding.SingleDeviceSharding(jax.devices()[0])
    out["single_device"] = (jax.device_put(jnp.ones(2), single), len(single.device_set))

    @partial(jax.jit, in_shardings=(sharding,), out_shardings=NamedSharding(mesh, P()))
    def total(a):
        a = jax.lax.with_sharding_constraint(a, NamedSharding(mesh, P("data", "model")))
        return a.sum(axis=0)
    out["jit_shardings"] = total(arr)
    out["sharded_grad"] = jax.grad(lambda a: jnp.sum(a ** 2))(arr)

    # shard_map on the one-device mesh: each "shard" is the whole array
    def local_mean(block):
        s = jax.lax.psum(block.sum(axis=0), "x")
        n = jax.lax.psum(block.shape[0], "x")
        return s / n
    sm = jax.shard_map(local_mean, mesh=mesh1, in_specs=P("x"), out_specs=P())
    out["shard_map"] = jax.jit(sm)(jnp.arange(6.0).reshape(3, 2))
    from jax.experimental.shard_map import shard_map

    @partial(shard_map, mesh=mesh1, in_specs=(P("x", None), P(None, None)),
             out_specs=P("x", None))
    def matmul_local(a, b):
        return a @ b + jax.lax.axis_index("x")
    out["shard_map_exp"] = matmul_local(jnp.ones((2, 3)), jnp.arange(6.0).reshape(3, 2))
    out["shard_map_grad"] = jax.grad(lambda a: sm(a).sum())(jnp.ones((2, 2)))
    return out
