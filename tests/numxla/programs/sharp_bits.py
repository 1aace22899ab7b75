"""JAX's "Sharp bits" and "Thinking in JAX" pages: immutable arrays and
.at[] updates in every mode (set/add/mul/min/max/get, out-of-bounds modes,
fill values, unique_indices), out-of-bounds indexing and dynamic_slice
clamping, jnp vs np (non-array inputs rejected), NaN-safe gradients with
the double-where trick, and pure functions under jit."""


def main(jax):
    import numpy as np
    import jax.numpy as jnp
    from jax import grad, jit, lax

    x = jnp.arange(10.0)
    out = {}
    # in-place updates are out-of-place
    y = x.at[2].set(100.0)
    out["orig_untouched"] = x[2]
    out["set"] = y
    out["add"] = x.at[::3].add(1.0)
    out["mul"] = x.at[jnp.array([1, 1, 4])].multiply(3.0)
    out["min"] = x.at[5:].min(6.5)
    out["max"] = x.at[:4].max(jnp.array([3.0, 2.0, 1.0, 0.0]))
    out["get_clip"] = x.at[jnp.array([-1, 12])].get(mode="clip")
    out["get_fill_nan"] = x.at[jnp.array([3, 11])].get(mode="fill")
    out["get_fill_val"] = x.at[jnp.array([3, 11])].get(mode="fill", fill_value=-7.0)
    out["set_drop"] = x.at[jnp.array([0, 10, 20])].set(-1.0, mode="drop")
    out["add_clip"] = x.at[jnp.array([0, 10, 20])].add(5.0, mode="clip")
    out["add_promise"] = x.at[jnp.array([1, 2])].add(1.0, mode="promise_in_bounds")
    out["set_sorted_unique"] = x.at[jnp.array([1, 3])].set(9.0, indices_are_sorted=True,
                                                              unique_indices=True)
    m = jnp.zeros((3, 4), dtype=jnp.int32)
    out["at_2d"] = m.at[1, :].set(7).at[:, 2].add(1).at[(0, 2), (1, 3)].set(-1)
    # out-of-bounds reads clamp, out-of-bounds writes are dropped
    out["oob_index"] = x[11]
    out["oob_neg"] = x[-11]
    out["oob_update"] = x.at[11].set(33.0)
    out["dynamic_slice_clamped"] = lax.dynamic_slice(x, (8,), (4,))
    out["dynamic_update_clamped"] = lax.dynamic_update_slice(x, jnp.ones(3), (9,))
    out["jit_oob"] = jit(lambda v, i: v[i])(x, 25)
    # jnp refuses lists where numpy accepts them
    try:
        jnp.sum([1, 2, 3])
        out["list_input"] = "accepted"
    except TypeError:
        out["list_input"] = "TypeError"
    out["list_via_array"] = jnp.sum(jnp.array([1, 2, 3]))
    out["np_on_jax"] = float(np.sum(np.asarray(x)))
    # NaN-safe gradients: the double where
    def safe_log_bad(v):
        return jnp.where(v > 0.0, jnp.log(v), 0.0)

    def safe_log(v):
        safe_v = jnp.where(v > 0.0, v, 1.0)
        return jnp.where(v > 0.0, jnp.log(safe_v), 0.0)
    out["grad_where_bad"] = grad(safe_log_bad)(0.0)
    out["grad_where_good"] = grad(safe_log)(0.0)
    out["grad_sqrt0"] = grad(jnp.sqrt)(0.0)
    out["grad_abs0"] = grad(jnp.abs)(0.0)
    out["grad_norm0"] = grad(lambda v: jnp.linalg.norm(v))(jnp.zeros(2))
    # pure functions: globals captured at trace time
    g = 0.0

    def impure_uses_globals(v):
        return v + g
    f = jit(impure_uses_globals)
    first = f(4.0)
    g = 10.0
    out["captured_global"] = (first, f(4.0), f(jnp.array([4.0])))
    # division by zero, integer overflow and float precision
    out["div_zero"] = jnp.array([1.0, -1.0, 0.0]) / 0.0
    out["int_overflow"] = jnp.array(2 ** 31 - 1, dtype=jnp.int32) + 1
    out["uint_wrap"] = jnp.array(0, dtype=jnp.uint8) - 1
    out["f32_default"] = jnp.array(1.0 / 3.0) * 3.0
    out["nan_compare"] = (jnp.nan == jnp.nan, jnp.isnan(jnp.nan))
    out["nan_max"] = (jnp.max(jnp.array([1.0, jnp.nan])), jnp.nanmax(jnp.array([1.0, jnp.nan])))
    out["argsort_stable"] = jnp.argsort(jnp.array([2, 1, 2, 1, 0]), stable=True)
    out["astype_trunc"] = jnp.array([-1.7, 1.7, 2.5]).astype(jnp.int32)
    out["float_to_uint"] = jnp.array([300.0]).astype(jnp.uint8).dtype.name
    return out
