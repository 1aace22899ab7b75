"""Big kernel helpers called through a symbol instead of linked into each graph.

Numba links the LLVM IR of every ``@njit`` function a compiled function calls
into the caller and optimises the whole again, for every caller: each
generated graph that multiplies matrices carried (and re-optimised) its own
copy of :func:`compile.kernels.blas.dot_blas`, about half of its LLVM code.

An :class:`Entry` compiles such a helper once per signature as a separate,
disk-cached Numba function, registers the address of its native entry point
(Numba's own calling convention, so exceptions propagate as usual) with LLVM
under a stable symbol name (``llvmlite.binding.add_symbol``), and gives
generated code an ``@intrinsic`` that declares that symbol and calls it.
Object code refers to the symbol by name, so graphs stay cacheable on disk;
the symbol must be registered before such code is linked, which
:meth:`Entry.ensure` does when the intrinsic is compiled, and
:func:`ensure_for_source` (called by the disk cache before loading a module)
does for every entry a generated module's source names.

Arguments whose types do not match an entry's signature (another layout, a
read-only output...) take Numba's usual linked call of the helper.
"""
from __future__ import annotations

import threading
from typing import Callable, Sequence

from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

__all__ = ["Entry", "ensure_for_source"]

_lock = threading.RLock()
_registered: dict[str, int] = {}
_entries: dict[str, "Entry"] = {}


class Entry:
    """``dispatcher`` (a ``cache=True`` Numba function) compiled for ``sig``
    (argument types; its result must be ``none``) and called through the
    symbol ``numxla_<name>``; ``outputs``: the argument positions it writes
    (a read-only array may not go there)."""

    def __init__(self, name: str, dispatcher, sig: Sequence[types.Type],
                 outputs: Sequence[int] = ()):
        self.name = name
        self.symbol = f"numxla_x_{name}"
        self.dispatcher = dispatcher
        self.sig = tuple(sig)
        self.outputs = frozenset(outputs)
        _entries[name] = self

    # -- the compiled helper --------------------------------------------------------------
    def ensure(self) -> None:
        """Compile or load the helper and register its symbol (once per process)."""
        if self.symbol in _registered:
            return
        with _lock:
            if self.symbol in _registered:
                return
            from numba.core.compiler_lock import global_compiler_lock
            from llvmlite import binding
            from .cache import load_cached_overload
            with global_compiler_lock:
                cres = self.dispatcher.overloads.get(self.sig)
                if cres is None and load_cached_overload(self.dispatcher, self.sig):
                    cres = self.dispatcher.overloads.get(self.sig)
                if cres is None:
                    self.dispatcher.compile(self.sig)
                    cres = self.dispatcher.overloads[self.sig]
                if cres.signature.return_type != types.none:
                    raise TypeError(f"{self.name}: external helpers return nothing")
                addr = cres.library.get_pointer_to_function(cres.fndesc.llvm_func_name)
                if not addr:
                    raise RuntimeError(f"{self.name}: no native entry point")
                binding.add_symbol(self.symbol, addr)
                _registered[self.symbol] = addr

    # -- the call from generated code ----------------------------------------------------
    def _fits(self, args) -> bool:
        if len(args) != len(self.sig):
            return False
        for i, (got, want) in enumerate(zip(args, self.sig)):
            if isinstance(want, types.Array):
                if not (isinstance(got, types.Array) and got.ndim == want.ndim and
                        got.dtype == want.dtype and got.layout == want.layout and
                        (got.mutable or i not in self.outputs)):
                    return False
            elif isinstance(want, types.Integer):
                if not isinstance(got, (types.Integer, types.Boolean)):
                    return False
            elif isinstance(want, types.Float):
                if not isinstance(got, (types.Integer, types.Float, types.Boolean)):
                    return False
            elif isinstance(want, types.Boolean):
                if not isinstance(got, types.Boolean):
                    return False
            elif got != want:
                return False
        return True

    def make_intrinsic(self) -> Callable:
        entry = self

        def call(typingctx, *args):
            if not entry._fits(args):
                return _linked_call(typingctx, entry.dispatcher, args)
            sig = types.none(*args)

            def codegen(context, builder, sig, llargs):
                entry.ensure()
                want = entry.sig
                values = []
                for val, got, ty in zip(llargs, sig.args, want):
                    if isinstance(ty, types.Array):
                        values.append(val)  # same data model: only mutability may differ
                    else:
                        values.append(context.cast(builder, val, got, ty))
                call_conv = context.call_conv
                fnty = call_conv.get_function_type(types.none, want)
                fn = cgutils.get_or_insert_function(builder.module, fnty, entry.symbol)
                status, _ = call_conv.call_function(builder, fn, types.none, want, values)
                with cgutils.if_unlikely(builder, status.is_error):
                    call_conv.return_status_propagate(builder, status)
                return context.get_dummy_value()
            return sig, codegen

        # Numba's intrinsics need named parameters (no ``*args``)
        params = ", ".join(f"a{i}" for i in range(len(self.sig)))
        scope = {"call": call}
        exec(f"def {self.name}(typingctx, {params}):\n"
             f"    return call(typingctx, {params})\n", scope)
        return intrinsic(scope[self.name])


def _linked_call(typingctx, dispatcher, args):
    """Numba's usual call of ``dispatcher`` (its code linked into the caller),
    for the arguments' non-literal types: constant sizes in generated code
    would otherwise compile the helper again for every shape."""
    fnty = types.Dispatcher(dispatcher)
    plain = tuple(types.unliteral(a) for a in args)
    target = typingctx.resolve_function_type(fnty, plain, {})
    if target is None:
        return None

    def codegen(context, builder, sig, llargs):
        values = [context.cast(builder, v, got, want)
                  for v, got, want in zip(llargs, sig.args, target.args)]
        return context.get_function(fnty, target)(builder, values)
    return target.return_type(*args), codegen


def ensure_for_source(source: str) -> None:
    """Register the symbol of every entry that generated ``source`` calls
    (``<name>(``), before its compiled code is loaded."""
    for name, entry in list(_entries.items()):
        if f"{name}(" in source:
            entry.ensure()
