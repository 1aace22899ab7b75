"""What a JAX user sees with x64 off (JAX's default): f32/i32 defaults,
weak types of Python scalars, promotion between arrays, NumPy inputs, and
how arrays print, format and convert to Python."""


def main(jax):
    import numpy as onp
    jnp = jax.numpy

    f = jnp.ones(3)
    i = jnp.arange(3)
    h = jnp.ones(3, dtype=jnp.float16)
    b = jnp.array([True, False, True])
    u8 = jnp.array([1, 2, 250], dtype=jnp.uint8)
    np64 = onp.linspace(0.0, 1.0, 3)
    jitted = jax.jit(lambda a: a * 2)(f)
    out = {}
    cases = {
        "ones": f, "arange": i, "arange_f": jnp.arange(3.0), "linspace": jnp.linspace(0, 1, 3),
        "list_f": jnp.array([1.0, 2.0]), "list_i": jnp.array([1, 2]), "np64": jnp.asarray(np64),
        "f_plus_i": f + i, "i_plus_float": i + 1.5, "i_times_int": i * 3, "h_plus_py": h + 1.0,
        "h_plus_f": h + f, "i_div": i / 2, "i_floordiv": i // 2, "u8_plus_py": u8 + 10,
        "u8_plus_i": u8 + i, "b_plus_b": b + b, "b_plus_i": b + i, "f_plus_np64": f + np64,
        "jit_plus_i": jitted + i, "jit_plus_np64": jitted * np64, "mean_i": jnp.mean(i),
        "sum_b": jnp.sum(b), "sqrt_i": jnp.sqrt(i), "i_pow_2": i ** 2, "f_pow_i": f ** i,
        "astype": i.astype(jnp.float32) / 3, "np_scalar": f * onp.float64(2.0),
        "np_int": i + onp.int64(2), "py_scalar_arr": jnp.asarray(3.0), "int_arr": jnp.asarray(3),
        "full": jnp.full((2,), 7), "zeros_like_i": jnp.zeros_like(i), "eye": jnp.eye(2),
        "where_mixed": jnp.where(b, i, 0.5), "maximum_py": jnp.maximum(i, 1.5),
        "argmax": jnp.argmax(f), "nan_to_num": jnp.nan_to_num(jnp.array([jnp.nan, jnp.inf])),
        "f_eq_i": f == i, "complex": f + 1j, "x_rsub": 1 - i, "uint_shift": u8 >> 1,
        "rem": jnp.remainder(jnp.array([-3, 3]), 2), "fmod": jnp.fmod(jnp.array([-3.0, 3.0]), 2),
        "round": jnp.round(jnp.array([0.5, 1.5, 2.5])), "int_true_div": jnp.array(7) / jnp.array(2),
        "grad_int_fn": jax.grad(lambda x: x * 2)(1.0),
    }
    for name, value in cases.items():
        out[name] = value
        out[name + ":dtype"] = str(value.dtype)
    x = jnp.array([[1.0, 2.5], [-3.0, 4.0]])
    s = jnp.float32(3.25) * jnp.ones(())
    out["str"] = str(x)
    out["str_i"] = str(jnp.arange(5))
    out["format"] = "{:.2f}".format(s) + f" {s:6.3f} {jax.jit(lambda a: a + 1)(s):.1f}"
    out["float"] = float(s)
    out["int"] = int(jnp.int32(7))
    out["item"] = x[1, 1].item()
    out["tolist"] = x.tolist()
    out["len"] = len(x)
    out["iter"] = [float(r.sum()) for r in x]
    out["iter_jit"] = [str(r.dtype) for r in jax.jit(lambda a: a * 2)(x)]
    out["bool"] = bool(x[0, 0] < x[0, 1])
    out["index"] = [10, 20, 30][jnp.int32(1)]
    out["device_get"] = type(jax.device_get(x)).__name__
    out["block"] = x.block_until_ready().shape
    out["np_conv"] = onp.asarray(jitted).dtype.name + " " + onp.array(x).dtype.name
    out["shape_attrs"] = (x.shape, x.ndim, x.size, x.dtype == jnp.float32, x.T.shape)
    out["isinstance"] = isinstance(x, jax.Array) and isinstance(jitted, jax.Array)
    out["finfo"] = float(jnp.finfo(jnp.float32).eps)
    out["iinfo"] = int(jnp.iinfo(jnp.int32).max)
    out["issubdtype"] = (jnp.issubdtype(x.dtype, jnp.floating),
                         jnp.issubdtype(i.dtype, jnp.integer))
    out["result_type"] = str(jnp.result_type(jnp.int32, jnp.float16))
    out["promote_types"] = str(jnp.promote_types(jnp.uint8, jnp.int8))
    out["dtype_attr"] = str(jnp.float32(1.0).dtype) + str(jnp.dtype("float32"))
    out["x64"] = jax.config.jax_enable_x64 if hasattr(jax.config, "jax_enable_x64") else None
    return out
