"""Buffer allocation for generated code without Numba's ``np.empty`` overload.

``np.empty(n, dtype)`` in a Numba function is an ``@overload`` whose
implementation, and the allocator trampolines under it, Numba compiles
through its whole pipeline the first time a process lowers it (~0.1 s of
every cold compilation; overloads are not cached on disk).
:func:`empty_buf` and :func:`zeros_buf` emit the same allocation (an aligned,
reference-counted NRT block with the array's layout, the same overflow
check) straight as LLVM IR.
"""
from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic
from numba.np.arrayobj import get_itemsize, make_array, populate_array

__all__ = ["empty_buf", "zeros_buf"]


def _typer(n, dtype):
    if not isinstance(n, types.Integer) or not isinstance(dtype, (types.NumberClass, types.DType)):
        return None
    return types.Array(dtype.dtype, 1, "C")


def _allocate(context, builder, arrtype, n, nty, zero: bool):
    intp = context.get_value_type(types.intp)
    n = context.cast(builder, n, nty, types.intp)
    itemsize = context.get_constant(types.intp, get_itemsize(context, arrtype))
    size, overflow = cgutils.muladd_with_overflow(builder, n, itemsize, ir.Constant(intp, 0))
    negative = builder.icmp_signed("<", n, ir.Constant(intp, 0))
    with builder.if_then(builder.or_(overflow, negative), likely=False):
        context.call_conv.return_user_exc(
            builder, ValueError,
            ("array is too big; `arr.size * arr.dtype.itemsize` is larger than"
             " the maximum possible size.",))
    align = context.get_preferred_array_alignment(arrtype.dtype)
    meminfo = context.nrt.meminfo_alloc_aligned(builder, size=size, align=align)
    data = context.nrt.meminfo_data(builder, meminfo)
    if zero:
        cgutils.memset(builder, data, size, 0)
    ary = make_array(arrtype)(context, builder)
    datatype = context.get_data_type(arrtype.dtype)
    populate_array(ary, data=builder.bitcast(data, datatype.as_pointer()),
                   shape=cgutils.pack_array(builder, [n], ty=intp),
                   strides=cgutils.pack_array(builder, [itemsize], ty=intp),
                   itemsize=itemsize, meminfo=meminfo)
    return ary._getvalue()


def _buffer_intrinsic(name: str, zero: bool, doc: str):
    """A 1-D allocation intrinsic, zero-filled or not."""
    def buffer(typingctx, n, dtype):
        arrtype = _typer(n, dtype)
        if arrtype is None:
            return None

        def codegen(context, builder, sig, args):
            return _allocate(context, builder, sig.return_type, args[0], sig.args[0], zero)
        return arrtype(n, dtype), codegen
    buffer.__name__ = buffer.__qualname__ = name
    buffer.__doc__ = doc
    return intrinsic(buffer)


empty_buf = _buffer_intrinsic("empty_buf", False, "``np.empty(n, dtype)`` (1-D).")
zeros_buf = _buffer_intrinsic("zeros_buf", True, "``np.zeros(n, dtype)`` (1-D).")
