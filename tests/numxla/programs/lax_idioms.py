"""jax.lax as its API docs and JAX's own examples call it: reduce with
a custom monoid, reduce_window with init_value (max/avg pooling, padding
strings and explicit pads), conv_general_dilated with dimension_numbers
strings (NHWC/HWIO), strides, dilation and feature groups, conv_transpose,
dot_general with batch dimensions and preferred_element_type,
dynamic_update_slice, sort with several operands and num_keys, sort_key_val,
top_k, population_count, clz, bitcast_convert_type, shifts, pad with
interior padding, broadcast_in_dim, iota and the small shape helpers."""


def main(jax):
    import numpy as np
    import jax.numpy as jnp
    from jax import lax

    out = {}
    x = jnp.arange(1.0, 13.0).reshape(3, 4)
    out["reduce_add"] = lax.reduce(x, 0.0, lax.add, (0,))
    out["reduce_max"] = lax.reduce(x, -jnp.inf, lax.max, (0, 1))
    out["reduce_multi"] = lax.reduce((x, jnp.ones_like(x)), (0.0, 0.0),
                                     lambda a, b: (a[0] + b[0], a[1] + b[1]), (1,))
    out["reduce_lambda"] = lax.reduce(jnp.arange(1, 6), 1, lambda a, b: a * b, (0,))

    img = jnp.arange(16.0).reshape(1, 4, 4, 1)
    out["max_pool"] = lax.reduce_window(img, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1),
                                        "VALID")
    out["avg_pool_same"] = lax.reduce_window(img, 0.0, lax.add, (1, 3, 3, 1), (1, 1, 1, 1),
                                             "SAME") / 9.0
    out["window_pads"] = lax.reduce_window(jnp.arange(6.0), 0.0, lax.add, (2,), (1,),
                                           [(1, 1)])
    out["window_dilated"] = lax.reduce_window(jnp.arange(8.0), 0.0, lax.add, (2,), (1,),
                                              "VALID", window_dilation=(3,))
    out["window_min_int"] = lax.reduce_window(jnp.array([4, 2, 7, 1, 9]),
                                              jnp.iinfo(jnp.int32).max, lax.min, (2,), (1,),
                                              "VALID")

    # convolutions with dimension_numbers strings
    kernel = jnp.array([[1.0, 0.0], [0.0, -1.0]]).reshape(2, 2, 1, 1)
    kernel = jnp.concatenate([kernel, 2 * kernel], axis=3)  # HWIO with 2 output features
    dn = lax.conv_dimension_numbers(img.shape, kernel.shape, ("NHWC", "HWIO", "NHWC"))
    out["conv_dn"] = tuple(tuple(d) for d in dn)
    out["conv_nhwc"] = lax.conv_general_dilated(img, kernel, (1, 1), "SAME",
                                                dimension_numbers=("NHWC", "HWIO", "NHWC"))
    out["conv_strided"] = lax.conv_general_dilated(img, kernel, window_strides=(2, 2),
                                                   padding=((1, 0), (0, 1)),
                                                   dimension_numbers=dn)
    out["conv_dilated"] = lax.conv_general_dilated(img, kernel, (1, 1), ((0, 0), (1, 1)),
                                                   lhs_dilation=(2, 2), rhs_dilation=(1, 2),
                                                   dimension_numbers=("NHWC", "HWIO", "NHWC"))
    nchw = jnp.arange(4 * 3 * 3.0).reshape(1, 4, 3, 3)
    grouped_k = jnp.ones((4, 2, 2, 2))   # OIHW, 2 groups of 2 input features
    out["conv_groups"] = lax.conv_general_dilated(nchw, grouped_k, (1, 1), "VALID",
                                                  feature_group_count=2)
    out["conv_plain"] = lax.conv(nchw, jnp.ones((1, 4, 2, 2)), (1, 1), "SAME")
    out["conv_with_padding"] = lax.conv_with_general_padding(
        nchw, jnp.ones((1, 4, 2, 2)), (1, 1), ((0, 1), (1, 0)), (1, 1), (1, 1))
    out["conv_transpose"] = lax.conv_transpose(img, kernel, (2, 2), "SAME",
                                               dimension_numbers=("NHWC", "HWIO", "NHWC"))
    out["conv_1d"] = lax.conv_general_dilated(jnp.arange(6.0).reshape(1, 1, 6),
                                              jnp.array([[[1.0, -1.0]]]), (1,), "VALID")

    # dot_general
    a = jnp.arange(24.0).reshape(2, 3, 4)
    b = jnp.arange(40.0).reshape(2, 4, 5)
    out["dot_general_batch"] = lax.dot_general(a, b, (((2,), (1,)), ((0,), (0,))))
    out["dot_general_contract2"] = lax.dot_general(a, a, (((1, 2), (1, 2)), ((), ())))
    i8 = jnp.array([[100, 100], [1, 2]], dtype=jnp.int8)
    out["dot_preferred"] = lax.dot_general(i8, i8, (((1,), (0,)), ((), ())),
                                           preferred_element_type=jnp.int32)
    out["dot"] = lax.dot(x, x.T, precision=lax.Precision.HIGHEST)
    out["batch_matmul"] = lax.batch_matmul(a, b)

    # slicing and updating
    out["dus"] = lax.dynamic_update_slice(x, jnp.zeros((2, 2)), (1, 2))
    out["dus_in_dim"] = lax.dynamic_update_slice_in_dim(x, -jnp.ones((3, 1)), 3, axis=1)
    out["dus_index"] = lax.dynamic_update_index_in_dim(x, jnp.zeros(4), 0, axis=0)
    out["ds_in_dim"] = lax.dynamic_slice_in_dim(x, 1, 2, axis=1)
    out["dynamic_index"] = lax.dynamic_index_in_dim(x, 2, axis=0, keepdims=False)
    out["slice"] = (lax.slice(x, (0, 1), (3, 4), (2, 2)), lax.slice_in_dim(x, 1, 3, axis=1),
                    lax.index_in_dim(x, 1, axis=1, keepdims=False))
    out["jit_dus"] = jax.jit(lambda m, i: lax.dynamic_update_slice(m, jnp.ones((1, 4)),
                                                                   (i, 0)))(x, 7)

    # sorting
    keys = jnp.array([3, 1, 2, 1, 3])
    vals = jnp.array([10.0, 20.0, 30.0, 40.0, 50.0])
    out["sort_multi"] = lax.sort((keys, vals))
    out["sort_num_keys"] = lax.sort((keys, -vals), num_keys=2)
    out["sort_key_val"] = lax.sort_key_val(keys, vals)
    out["sort_2d"] = lax.sort(x[::-1] * jnp.array([1.0, -1.0, 1.0, -1.0]), dimension=0)
    out["sort_unstable"] = lax.sort(jnp.array([3.0, -0.0, 0.0, jnp.nan, -1.0]),
                                    is_stable=False)
    out["top_k"] = lax.top_k(jnp.array([[1.0, 5.0, 3.0], [9.0, 2.0, 7.0]]), 2)
    out["argmax"] = (lax.argmax(x, 1, jnp.int32), lax.argmin(x, 0, jnp.int32))

    # bits
    u = jnp.array([0, 1, 7, 255, 2 ** 20], dtype=jnp.uint32)
    out["population_count"] = lax.population_count(u)
    out["clz"] = lax.clz(u)
    out["bitcast_f2i"] = lax.bitcast_convert_type(jnp.array([1.0, -2.0], jnp.float32), jnp.int32)
    out["bitcast_i2f"] = lax.bitcast_convert_type(jnp.array(0x3F800000, jnp.int32), jnp.float32)
    out["bitcast_split"] = lax.bitcast_convert_type(jnp.array([1.0], jnp.float32), jnp.uint8)
    out["bitcast_join"] = lax.bitcast_convert_type(jnp.array([0, 0, 128, 63], jnp.uint8),
                                                   jnp.float32)
    s = jnp.array([-8, 1, 64], dtype=jnp.int32)
    out["shifts"] = (lax.shift_left(s, 2), lax.shift_right_arithmetic(s, 1),
                     lax.shift_right_logical(s, 1), jnp.left_shift(s, 1),
                     jnp.right_shift(s, 2))
    out["bitwise"] = (jnp.bitwise_and(s, 6), jnp.bitwise_or(s, 1), jnp.bitwise_xor(s, 3),
                      jnp.invert(s), lax.bitwise_not(s))

    # shapes, padding, broadcasting, iota
    out["pad_interior"] = lax.pad(jnp.array([1.0, 2.0, 3.0]), 0.0, [(1, 2, 1)])
    out["pad_negative"] = lax.pad(x, -1.0, [(0, 0, 0), (-1, 1, 0)])
    out["broadcast_in_dim"] = lax.broadcast_in_dim(jnp.array([1.0, 2.0]), (3, 2), (1,))
    out["broadcast"] = lax.broadcast(jnp.array([1, 2]), (2,))
    out["iota"] = (lax.iota(jnp.int32, 4), lax.broadcasted_iota(jnp.float32, (2, 3), 1))
    out["expand_squeeze"] = (lax.expand_dims(x, (0, 2)).shape,
                             lax.squeeze(jnp.ones((1, 3, 1)), (0, 2)).shape,
                             lax.collapse(jnp.ones((2, 3, 4)), 1, 3).shape)
    out["rev_transpose"] = (lax.rev(x, (0, 1)), lax.transpose(a, (2, 0, 1)).shape)
    out["reshape_dims"] = lax.reshape(jnp.arange(6), (3, 2), dimensions=(0,))
    out["concat"] = lax.concatenate([x, x], 1).shape
    out["convert"] = (lax.convert_element_type(jnp.array([1.7, -1.7]), jnp.int32),
                      lax.convert_element_type(jnp.array([1, 0]), jnp.bool_))
    out["reduce_precision"] = lax.reduce_precision(jnp.float32(1.0 + 2 ** -12),
                                                   exponent_bits=5, mantissa_bits=10)
    out["math"] = (lax.rsqrt(4.0), lax.integer_pow(x[0], 3), lax.erf_inv(0.5),
                   lax.logistic(0.0), lax.exp2(3.0), lax.square(3.0), lax.cbrt(27.0),
                   lax.sign(-2.5), lax.rem(7, 3), lax.nextafter(jnp.float32(1.0),
                                                              jnp.float32(2.0)) - 1.0,
                   lax.is_finite(jnp.array([1.0, jnp.inf])), lax.complex(1.0, 2.0),
                   lax.atan2(1.0, 1.0), lax.div(7, -2), lax.max(2, 3))
    out["np_in_lax"] = lax.add(np.float32(1.0), jnp.float32(2.0))
    return out
