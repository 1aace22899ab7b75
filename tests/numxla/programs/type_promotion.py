"""JAX's "Type promotion semantics" page and jax.numpy's dtype API with
x64 off: the promotion table of jnp.promote_types over the standard dtypes,
weakly typed Python scalars against every dtype, jnp.result_type of mixed
arguments and Python types, lax on one dtype, explicit conversions
with astype/jnp.array(dtype=), out-of-range Python ints, and dtype
queries (finfo/iinfo/issubdtype/can_cast/dtypes.canonicalize_dtype)."""


def main(jax):
    import numpy as np
    import jax.numpy as jnp
    from jax import lax

    # (bf16 is left out of the printed tables: numxla shows bf16 arrays' dtype as
    # their uint16 storage unless ml_dtypes is installed; its promotion is tested
    # through result types below)
    names = ["bool", "uint8", "uint16", "uint32", "int8", "int16", "int32",
             "float16", "float32", "complex64"]
    dtypes = [jnp.dtype(n) for n in names]
    out = {}
    out["table"] = [" ".join(str(jnp.promote_types(a, b)) for b in dtypes) for a in dtypes]
    out["arrays_table"] = [" ".join(str((jnp.zeros(1, a) + jnp.zeros(1, b)).dtype)
                                    for b in dtypes) for a in dtypes]
    out["weak_int"] = " ".join(str((jnp.zeros(1, a) + 1).dtype) for a in dtypes)
    out["weak_float"] = " ".join(str((jnp.zeros(1, a) + 1.0).dtype) for a in dtypes)
    out["weak_complex"] = " ".join(str((jnp.zeros(1, a) * 1j).dtype) for a in dtypes)
    out["result_type"] = [str(jnp.result_type(*args)) for args in (
        (jnp.int8, 1.0), (jnp.int8, np.float16), (jnp.uint8, jnp.int16, jnp.float16),
        (1, 2.0), (int,), (float,), (complex,), (jnp.bfloat16, jnp.float16),
        (np.int64,), (np.float64, jnp.int32), (jnp.zeros(2, jnp.int16), 3))]
    out["jit_weak"] = [str(jax.jit(lambda x: x * 2)(v).dtype)
                       for v in (2, 2.0, jnp.int8(2), np.float16(2))]

    # lax on one dtype (JAX's lax refuses mixed dtypes; numxla's promotes them)
    out["lax_same_dtype"] = [lax.add(jnp.float32(1), 2.0), lax.mul(jnp.int32(3), 2),
                             lax.sub(jnp.float16(1), jnp.float16(0.5))]
    out["lax_convert"] = lax.convert_element_type(jnp.array([1.7, -1.7]), jnp.int32)

    # conversions
    x = jnp.array([1.5, -2.5, 300.0])
    out["astype_int8"] = x[:2].astype(jnp.int8)
    out["astype_uint8"] = jnp.array([1.0, 255.0]).astype(jnp.uint8)
    out["astype_bool"] = x.astype(bool)
    out["bool_to_float"] = jnp.array([True, False]).astype(jnp.float16)
    out["float_to_bf16"] = x.astype(jnp.bfloat16).astype(jnp.float32)
    out["array_dtype_kw"] = jnp.array([1, 2], dtype=jnp.float16)
    out["int64_request"] = str(jnp.array([1, 2], dtype=jnp.int64).dtype)
    out["float64_request"] = str(jnp.zeros(2, dtype="float64").dtype)
    out["np_int64_input"] = str(jnp.asarray(np.arange(3)).dtype)
    out["uint_overflow_wrap"] = jnp.array([250], dtype=jnp.uint8) + jnp.array([10], jnp.uint8)
    try:
        jnp.array(2 ** 40)
        out["big_int"] = "ok"
    except OverflowError:
        out["big_int"] = "OverflowError"
    try:
        jnp.zeros(2, jnp.int32) + 2 ** 40
        out["big_weak_int"] = "ok"
    except OverflowError:
        out["big_weak_int"] = "OverflowError"

    # dtype queries
    out["finfo"] = [float(jnp.finfo(t).eps) for t in (jnp.float16, jnp.bfloat16, jnp.float32)]
    out["finfo_max"] = [float(jnp.finfo(t).max) for t in (jnp.float16, jnp.bfloat16)]
    out["iinfo"] = [int(jnp.iinfo(t).min) for t in (jnp.int8, jnp.int16, jnp.uint32)]
    out["issubdtype"] = [jnp.issubdtype(a, b) for a, b in (
        (jnp.bfloat16, jnp.floating), (jnp.float16, jnp.inexact), (jnp.uint8, jnp.signedinteger),
        (jnp.int8, jnp.integer), (bool, jnp.number), (jnp.complex64, jnp.complexfloating))]
    out["can_cast"] = [jnp.can_cast(a, b) for a, b in (
        (jnp.int8, jnp.int16), (jnp.float32, jnp.int32), (jnp.uint8, jnp.int8),
        (jnp.float16, jnp.float32))]
    out["canonicalize"] = [str(jax.dtypes.canonicalize_dtype(t)) for t in (
        np.float64, np.int64, np.uint64, np.complex128, np.float32)]
    out["default_dtypes"] = [str(jnp.zeros(()).dtype), str(jnp.arange(2).dtype),
                             str(jnp.array(1j).dtype), str(jnp.empty(0).dtype),
                             str(jnp.asarray(True).dtype), str(jnp.linspace(0, 1, 2).dtype)]
    return out
