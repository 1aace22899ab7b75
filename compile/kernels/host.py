"""Host callbacks: generated code calling a Python function, with the GIL.

Infeed, outfeed, send, recv, custom calls and the collectives of a
multi-process program run Python (``compile/lowering/side_effects.py`` and
``collectives.py`` hold the ``host_*`` functions).  :func:`host_call` calls
one from nopython code the way Numba calls an object-mode block: take the
GIL, box the arguments, call, unbox the results, release the GIL, and raise
whatever the call raised.  It finds the function by module and name at run
time, so compiled code holds no Python object: it is cached on disk and
loaded as it is (an ``objmode`` block is compiled again in every process
that loads code calling it, 0.05-0.2 s each).
"""
from __future__ import annotations

from numba import types
from numba.core import cgutils, sigutils
from numba.extending import intrinsic

__all__ = ["host_call"]


def _leaf_types(text: str) -> list[types.Type]:
    """``"float32[::1];int64[::1]"`` as Numba types (``;`` between results)."""
    return [sigutils._parse_signature_string(t) for t in text.split(";") if t]


@intrinsic
def host_call(typingctx, target, constants, results, values):
    """``module.function`` (``target``) called on the strings ``constants``
    (``;``-separated) then the kernel ``values`` (a tuple of buffers and
    tuples of buffers); returns the tuple of its results, typed ``results``
    (Numba type texts, ``;``-separated), or nothing when there are none."""
    texts = (target, constants, results)
    if not all(isinstance(t, types.StringLiteral) for t in texts) or \
            not isinstance(values, types.BaseTuple):
        return None
    leaves = _leaf_types(results.literal_value)
    out = types.Tuple(leaves) if leaves else types.none
    module_name, function = target.literal_value.rsplit(".", 1)
    strings = [c for c in constants.literal_value.split(";") if c]

    def codegen(context, builder, sig, args):
        pyapi = context.get_python_api(builder)
        env_manager = context.get_env_manager(builder)
        values_type, values_value = sig.args[3], args[3]
        gil = pyapi.gil_ensure()
        objects = [pyapi.string_from_string(context.insert_const_string(builder.module, s))
                   for s in strings]
        for i, ty in enumerate(values_type):
            value = builder.extract_value(values_value, i)
            context.nrt.incref(builder, ty, value)  # boxing steals a reference
            objects.append(pyapi.from_native_value(ty, value, env_manager))
        module = pyapi.import_module(context.insert_const_string(builder.module, module_name))
        failed = cgutils.is_null(builder, module)
        for obj in objects:
            failed = builder.or_(failed, cgutils.is_null(builder, obj))
        with builder.if_then(failed, likely=False):
            for obj in [module, *objects]:
                pyapi.decref(obj)  # (Py_XDECREF: NULL is fine)
            pyapi.gil_release(gil)
            context.call_conv.return_exc(builder)
        fn = pyapi.object_getattr_string(module, function)
        pyapi.decref(module)
        call_args = pyapi.tuple_pack(objects)
        for obj in objects:
            pyapi.decref(obj)
        slot = cgutils.alloca_once_value(builder, cgutils.get_null_value(pyapi.pyobj))
        with builder.if_then(cgutils.is_not_null(builder, fn), likely=True):
            builder.store(pyapi.call(fn, call_args), slot)
        pyapi.decref(fn)
        pyapi.decref(call_args)
        result = builder.load(slot)
        with builder.if_then(cgutils.is_null(builder, result), likely=False):
            pyapi.gil_release(gil)
            context.call_conv.return_exc(builder)  # raises what the call raised
        if not leaves:
            pyapi.decref(result)
            pyapi.gil_release(gil)
            return context.get_dummy_value()
        native = pyapi.to_native_value(sig.return_type, result)
        pyapi.decref(result)
        if callable(native.cleanup):
            native.cleanup()
        pyapi.gil_release(gil)
        with builder.if_then(native.is_error, likely=False):
            context.call_conv.return_exc(builder)
        return native.value

    return out(target, constants, results, values), codegen
