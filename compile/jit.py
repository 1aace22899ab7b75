"""``jit``: trace once per abstract signature, compile the graph with Numba.

A signature is the pytree structure of the arguments, every leaf's abstract
value (element type, dimensions, layout, weak type) and the static
arguments.  A call with a known signature costs a dictionary lookup, the
conversion of each argument to its physical buffer (free for arrays already
in the layout) and one Numba call.  Called under an enclosing trace (inside
another ``jit``, or under ``grad``), a jitted function is traced inline.
"""
from __future__ import annotations

import functools
import inspect
import itertools
import threading
import time
import types
import weakref
from typing import Any, Callable, Sequence

import numpy as np

from numxla.tracer import pytree
from numxla.tracer.config import config
from numxla.tracer.core import (AbstractValue, EagerArray, Tracer, abstractify,
                                check_special_values, dynamic_array, is_float0, runtime_sizes)
from numxla.tracer.graph import Graph
from numxla.tracer.printer import graph_to_text, subgraphs
from numxla.tracer.shapes import PrimitiveType, Shape
from numxla.tracer.tracing import (ShapeDtypeStruct, Signature, _argument_names, split_static,
                                   trace_with_signature)

from . import lowering  # noqa: F401  (registers the lowering rules)
from .background import PARALLEL_MIN_KERNELS, compile_in_parallel, service
from .cache import disk_cache_usable
from .dce import has_effects
from .fusion import fusion_roots
from .pipeline import lower, optimize
from .kernel import LibraryKernel, kernel_buffer
from .program import GraphProgram, KernelCall
from .runtime import Array, as_layout
from .tiers import (CHECKED_CALLS, TieredProgram, check_against_tier_0, compile_in_background,
                    log, log_level, tier_mode)

__all__ = ["jit", "JittedFunction", "Traced", "Lowered", "Compiled"]

_names = itertools.count()


class Compiled:
    """A graph compiled to a program of Numba kernels over physical buffers
    (:mod:`compile.pipeline`)."""

    def __init__(self, graph: Graph, out_shapes: Sequence[Shape], *, process_grid: Any = None,
                 load_code: bool = True):
        self._in_tree = graph.in_tree
        self.graph = graph = optimize(graph)
        self.out_shapes = tuple(out_shapes)
        self.program = program = lower(graph, self.out_shapes, process_grid=process_grid)
        self.fused = program.fused
        self.source = program.source
        self._run = program.run
        self._converters = tuple(_buffer_converter(av) for av in graph.in_avals)
        self._out_views = tuple(np.float16 if s.element_type is PrimitiveType.F16 else None
                                for s in self.out_shapes)
        self._plain_outputs = all(s.is_array for s in self.out_shapes)
        dynamic = isinstance(program, GraphProgram) and program.dynamic_inputs
        self._dynamic_inputs = [i for i, av in enumerate(graph.in_avals) if dynamic
                                and av.shape.is_array and any(av.shape.dynamic_dimensions)]
        self._dynamic_results = getattr(program, "dynamic_results", ())
        self._name = f"{graph.name}_{next(_names)}"
        # the first calls against tier 0 (NUMXLA_TIERED=check), where running twice is harmless
        checked = tier_mode() == "check" and process_grid is None and not has_effects(graph)
        self._checks_left = CHECKED_CALLS if checked else 0
        if load_code:
            self.has_code()

    # -- machine code --------------------------------------------------------------
    def kernel_calls(self) -> list[KernelCall]:
        """The program's kernels, each once, with the argument types it calls them with."""
        distinct = {(id(c.kernel), c.types): c for c in self.program.calls}
        return list(distinct.values())

    def missing_code(self) -> list[KernelCall]:
        """The kernel calls whose machine code is neither loaded nor in the disk cache."""
        return [c for c in self.kernel_calls() if not c.has_code()]

    def has_code(self) -> bool:
        """Whether every kernel's machine code is loaded (from the disk cache or
        compiled here): a call will not wait for Numba."""
        return not self.missing_code()

    def compile_now(self) -> None:
        """Compile, here and now, every kernel whose code is not loaded.  The
        library kernels (in Numba's cache beside their modules, once a
        machine has used them) load while the workers build generated ones."""
        start = time.perf_counter()
        calls = self.kernel_calls()
        library = [c for c in calls if isinstance(c.kernel, LibraryKernel)]
        missing = [c for c in calls
                   if not isinstance(c.kernel, LibraryKernel) and not c.has_code()]
        workers = service()
        warm = bool(missing) and disk_cache_usable() and workers.warm()
        if warm or (len(missing) >= PARALLEL_MIN_KERNELS and disk_cache_usable()):
            compile_in_parallel(missing, here=not warm, meanwhile=library)
        else:
            if missing and workers.servers and disk_cache_usable():
                workers.start()  # warm for the next compile, of this process or another
            for call in library + missing:
                call.compile()
        log.log(log_level(), "%s: %d kernels (%d library), %d generated ones compiled, "
                "%d from the cache, in %.2f s", self._name, len(calls), len(library),
                len(missing), len(calls) - len(library) - len(missing),
                time.perf_counter() - start)

    def call_flat(self, leaves: Sequence[Any]) -> list[Any]:
        buffers = [convert(x) for convert, x in zip(self._converters, leaves)]
        trailing = (self._input_sizes(leaves),) if self._dynamic_inputs else ()
        outs = self._run(buffers, trailing)
        if self._dynamic_results:
            results = self._dynamic_values(outs[:-1], outs[-1])
        elif not self._plain_outputs:
            results = [_runtime_value(b, s) for b, s in zip(outs, self.out_shapes)]
        else:
            results = [Array.wrap(b if view is None else b.view(view), s)
                       for b, s, view in zip(outs, self.out_shapes, self._out_views)]
        if self._checks_left:
            self._checks_left -= 1
            check_against_tier_0(self._name, self.graph, self.out_shapes, leaves, results)
        return results

    def _input_sizes(self, leaves: Sequence[Any]) -> np.ndarray:
        """The run-time sizes of the parameters with bounded dynamic dimensions."""
        sizes = [n for i in self._dynamic_inputs
                 for n in (runtime_sizes(leaves[i]) or self.graph.in_avals[i].dimensions)]
        return np.array(sizes, np.int64)

    def _dynamic_values(self, outs: Sequence[Any], sizes: np.ndarray) -> list[Any]:
        """Results as runtime values; those with bounded dynamic dimensions as
        ``DynamicArray`` (bounds' shape, zero past the run-time sizes), as
        the eager interpreter gives them."""
        values, k = [], 0
        for i, (b, s) in enumerate(zip(outs, self.out_shapes)):
            value = _runtime_value(b, s)
            if i in self._dynamic_results:
                n = sizes[k:k + len(s.dimensions)]
                k += len(s.dimensions)
                if any(a < bound for a, bound in zip(n, s.dimensions)):
                    value = dynamic_array(np.asarray(value), n)
            values.append(value)
        return values

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        leaves, tree = pytree.flatten((args, kwargs))
        self._check_arguments(leaves, tree)
        return self.graph.out_tree.unflatten(self.call_flat(leaves))

    def _check_arguments(self, leaves: Sequence[Any], tree: Any) -> None:
        """A ``TypeError`` unless the arguments have the structure, shapes and
        element types this program was compiled for (its kernels index the
        buffers with the compiled sizes: others would be read out of bounds)."""
        if self._in_tree is not None and tree != self._in_tree:
            raise TypeError(f"{self.graph.name}: called with arguments structured as {tree}, "
                            f"but compiled for {self._in_tree}")
        avals = self.graph.in_avals
        if len(leaves) != len(avals):
            raise TypeError(f"{self.graph.name}: called with {len(leaves)} array arguments, "
                            f"but compiled for {len(avals)}")
        for i, (x, want, var) in enumerate(zip(leaves, avals, self.graph.in_vars)):
            try:
                got = abstractify(x).shape
            except TypeError as error:
                raise TypeError(f"{self.graph.name}: argument {var.hint or i}: {error}") from None
            if not want.shape.is_array:
                continue
            if not got.is_array or got.dimensions != want.shape.dimensions or \
                    got.element_type is not want.shape.element_type:
                raise TypeError(
                    f"{self.graph.name}: argument {var.hint or i} is {_shape_text(got)}, but "
                    f"this program was compiled for {_shape_text(want.shape)}; call "
                    f"lower(...).compile() again for other shapes, or use the jitted function")

    def as_text(self) -> str:
        """The optimised graph as HLO-like text: the layout of every value that
        has a buffer, and which ops are fused into which loops (fused values
        have no buffer, hence no layout)."""
        fused_into: dict = {}
        for g in (self.graph, *subgraphs(self.graph)):
            for root, members in fusion_roots(self.fused, g.equations).items():
                for eq in members:
                    fused_into.setdefault(eq, []).append(root)
        return graph_to_text(self.graph, fused_into)


def _shape_text(shape: Shape) -> str:
    """``f32[3,4]``: the element type and dimensions (layouts may differ)."""
    if not shape.is_array:
        return str(shape)
    return f"{shape.element_type.name.lower()}[{','.join(map(str, shape.dimensions))}]"


def _runtime_value(value: Any, shape: Shape) -> Any:
    """A result of the compiled function as a runtime value: an ``Array``, a
    ``Token`` (from its 1-element bool buffer) or a ``TupleValue``."""
    from numxla.primitives.side_effects import Token, TupleValue
    if shape.is_token:
        return Token()
    if shape.is_tuple:
        return TupleValue(_runtime_value(v, s) for v, s in zip(value, shape.tuple_shapes))
    if shape.element_type is PrimitiveType.F16:
        value = value.view(np.float16)
    return Array.wrap(value, shape)


def _token_buffer(x: Any) -> np.ndarray:
    return np.zeros(1, np.bool_)


def _buffer_converter(aval: AbstractValue) -> Callable[[Any], Any]:
    """The argument -> physical buffer conversion for one parameter, with a
    fast path for C-contiguous NumPy arrays in the default layout.  A token
    becomes a 1-element bool buffer, a tuple a tuple of its elements'."""
    if aval.shape.is_token:
        return _token_buffer
    if aval.shape.is_tuple:
        elements = tuple(_buffer_converter(AbstractValue(s)) for s in aval.shape.tuple_shapes)
        return lambda x: tuple(convert(e) for convert, e in zip(elements, x))
    if aval.shape.is_array and aval.shape.has_default_layout and \
            aval.element_type is not PrimitiveType.F16:
        dtype = aval.dtype

        def convert(x: Any) -> np.ndarray:
            if type(x) in _PLAIN_ARRAYS and x.dtype == dtype and x.flags.c_contiguous \
                    and x.flags.writeable:
                return x.reshape(-1)
            return kernel_buffer(x, aval)
        return convert
    return functools.partial(kernel_buffer, aval=aval)


# NumPy arrays and eager results: buffers as they are
_PLAIN_ARRAYS = (np.ndarray, EagerArray)
_DISABLED = False  # set by numxla.disable_jit()


def _leaf_key(x: Any) -> Any:
    """A cheap stand-in for a leaf's abstract value (None: no fast path)."""
    t = type(x)
    if t in _PLAIN_ARRAYS:
        return (x.dtype, x.shape)
    if t is Array:
        return x.xla_shape
    if t in (float, int, bool, complex):
        return t
    if isinstance(x, np.generic):
        return (x.dtype, ())
    return None


_NO_KEY = object()


def _is_layout_like(spec: Any) -> bool:
    """A single layout (rather than a list of per-argument layouts)."""
    return spec is None or isinstance(spec, (str, Shape)) or hasattr(spec, "minor_to_major") or (
        isinstance(spec, (tuple, list)) and all(isinstance(d, (int, np.integer)) for d in spec)
        and len(spec) > 0)


class Lowered:
    """A traced graph, before compilation (``jit(f).lower(*args)``)."""

    def __init__(self, graph: Graph, out_shapes: Sequence[Shape]):
        self.graph = graph
        self.out_shapes = tuple(out_shapes)

    def as_text(self) -> str:
        return self.graph.as_text()

    def compile(self) -> Compiled:
        """The compiled program, its machine code built (or loaded) before this returns."""
        compiled = Compiled(self.graph, self.out_shapes, load_code=False)
        compiled.compile_now()
        return compiled


class Traced:
    """``jit(f).trace(*args)``: the traced graph (``jaxpr``), its results'
    shapes and dtypes (``out_info``), and ``lower()``."""

    def __init__(self, graph: Graph, out_shapes: Sequence[Shape]):
        self.jaxpr = graph
        self.out_shapes = tuple(out_shapes)

    @property
    def out_info(self) -> Any:
        return self.jaxpr.out_tree.unflatten([
            ShapeDtypeStruct(av.dimensions, av.dtype)
            for av in self.jaxpr.out_avals])

    def lower(self) -> Lowered:
        return Lowered(self.jaxpr, self.out_shapes)


def _with_layout(shape: Shape, layout: Any, what: str) -> Shape:
    """``shape`` in ``layout``; a bad layout is an error naming ``what`` and the shape."""
    try:
        return shape.with_layout(as_layout(layout, len(shape.dimensions)))
    except (TypeError, ValueError) as error:
        raise type(error)(f"jit: {what} ({shape}): {error}") from None


def _static_both(fn: Callable, nums: Any, names: Any) -> tuple[Any, Any]:
    """``static_argnums`` and ``static_argnames`` completed from each other
    through ``fn``'s signature, as JAX does: a static parameter is static
    whether the caller passes it by position or by keyword."""
    if nums is None and names is None:
        return None, None
    nums_t = (nums,) if isinstance(nums, int) else tuple(nums or ())
    names_t = (names,) if isinstance(names, str) else tuple(names or ())
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):  # a builtin or C callable: as given
        return nums, names
    by_position = [p.name for p in params
                   if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    keyword = {p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    nums_t += tuple(by_position.index(n) for n in names_t
                    if n in by_position and by_position.index(n) not in nums_t)
    names_t += tuple(by_position[i] for i in nums_t if -len(by_position) <= i < len(by_position)
                     and by_position[i] in keyword and by_position[i] not in names_t)
    return (nums_t or None), (names_t or None)


def _function_name(fn: Callable) -> str:
    """A name for ``fn`` in messages and compiled code (a ``functools.partial``
    or a callable object has no ``__name__`` of its own)."""
    while isinstance(fn, functools.partial):
        fn = fn.func
    return getattr(fn, "__name__", None) or type(fn).__name__


# function -> {jit options: caches}: ``jax.jit(f)(x)`` written in a loop traces
# ``f`` once, as in JAX, rather than once per new ``jit`` object
_SHARED_CACHES: "weakref.WeakKeyDictionary[Callable, dict]" = weakref.WeakKeyDictionary()
_SHARED_LOCK = threading.Lock()


def _caches_for(fn: Callable, options: tuple) -> tuple[dict, dict, dict, threading.Lock]:
    """The trace caches of ``jit(fn)`` with ``options``: those of an earlier
    ``jit`` of the same function and options while ``fn`` lives; fresh ones
    where ``fn`` cannot be weakly referenced or the options are unhashable."""
    fresh = ({}, {}, {}, threading.Lock())
    try:
        hash(options)
        with _SHARED_LOCK:
            return _SHARED_CACHES.setdefault(fn, {}).setdefault(options, fresh)
    except TypeError:
        return fresh


class JittedFunction:
    """The result of ``jit(f)``: calls compile once per signature."""

    def __init__(self, fn: Callable, *, static_argnums=None, static_argnames=None,
                 in_layouts=None, out_layouts=None, tiered: bool | None = None):
        if not callable(fn):
            raise TypeError(f"jit: expected a function to compile, got {type(fn).__name__} "
                            f"{fn!r:.60}")
        functools.update_wrapper(self, fn)
        self.__name__ = _function_name(fn)
        self.fn = fn
        self.tiered = tiered
        self.static_argnums, self.static_argnames = _static_both(fn, static_argnums,
                                                                 static_argnames)
        self.in_layouts = in_layouts
        self.out_layouts = out_layouts
        # signature -> Compiled; (tree, statics, cheap leaf keys) -> Compiled (skips building
        # abstract values); positional ndarrays' keys -> Compiled.  Shared by every jit of
        # the same function and options, as JAX's trace cache is.
        self._cache: dict[Signature, Compiled]
        self._fast_cache: dict[tuple, Compiled]
        self._flat_cache: dict[tuple, Compiled]
        self._cache, self._fast_cache, self._flat_cache, self._lock = _caches_for(
            fn, (self.static_argnums, self.static_argnames, in_layouts, out_layouts, tiered,
                 tier_mode()))
        self._has_static = static_argnums is not None or static_argnames is not None

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        """A ``jit``-decorated method binds its instance as the first argument
        (``@partial(jit, static_argnums=0)`` on a method), as JAX's does."""
        return self if obj is None else types.MethodType(self, obj)

    # -- signatures ----------------------------------------------------------------
    def _signature(self, args: tuple, kwargs: dict) -> tuple[Signature, list[Any], tuple, dict]:
        dyn_args, dyn_kwargs, static_pos, static_kw = split_static(
            args, kwargs, self.static_argnums, self.static_argnames)
        leaves, in_tree = pytree.flatten((dyn_args, dyn_kwargs))
        avals = [abstractify(x) for x in leaves]
        if self.in_layouts is not None:
            avals = self._apply_in_layouts(dyn_args, avals)
        return Signature(in_tree, tuple(avals), static_pos, static_kw), leaves, dyn_args, dyn_kwargs

    def _apply_in_layouts(self, dyn_args: tuple, avals: list[AbstractValue]) -> list[AbstractValue]:
        specs = self.in_layouts
        if _is_layout_like(specs):
            specs = (specs,) * len(dyn_args)
        elif not isinstance(specs, (tuple, list)):
            raise TypeError(f"jit: in_layouts must be one layout (a Layout, layout text such "
                            f"as '{{1,0}}', a minor_to_major tuple) or one entry per "
                            f"positional argument; got {specs!r}")
        if len(specs) != len(dyn_args):
            raise ValueError(f"in_layouts has {len(specs)} entries for {len(dyn_args)} "
                             f"positional arguments")
        out, pos = list(avals), 0
        for index, (arg, spec) in enumerate(zip(dyn_args, specs)):
            n = len(pytree.tree_leaves(arg))
            if not (_is_layout_like(spec) or isinstance(spec, (tuple, list))):
                raise TypeError(f"jit: in_layouts entry {spec!r} for positional argument "
                                f"{index} is not a layout (a Layout, layout text "
                                f"such as '{{1,0}}', a minor_to_major tuple or None) nor a "
                                f"sequence of them")
            per_leaf = [spec] * n if _is_layout_like(spec) else list(spec)
            if len(per_leaf) != n:
                raise ValueError(f"in_layouts entry {spec!r} does not match an argument "
                                 f"with {n} arrays")
            for j, layout in enumerate(per_leaf):
                if layout is not None:
                    av = out[pos + j]
                    shape = _with_layout(av.shape, layout, f"in_layouts entry for argument "
                                                           f"leaf {pos + j}")
                    out[pos + j] = AbstractValue(shape, av.weak_type)
            pos += n
        return out

    def _out_shapes(self, graph: Graph) -> list[Shape]:
        shapes = [av.shape for av in graph.out_avals]
        if self.out_layouts is None:
            return shapes
        specs = self.out_layouts
        if _is_layout_like(specs):
            specs = [specs] * len(shapes)
        if len(specs) != len(shapes):
            raise ValueError(f"out_layouts has {len(specs)} entries for {len(shapes)} outputs")
        return [s if spec is None else _with_layout(s, spec, f"out_layouts entry for output {i}")
                for i, (s, spec) in enumerate(zip(shapes, specs))]

    # -- tracing and compiling ------------------------------------------------------
    def _trace(self, signature: Signature, dyn_args: tuple, dyn_kwargs: dict) -> Graph:
        hints = _argument_names(self.fn, dyn_args, dyn_kwargs, signature.static_args)
        box: dict[str, Any] = {}

        def without_float0(*args: Any, **kwargs: Any) -> list[Any]:
            leaves, box["tree"] = pytree.flatten(self.fn(*args, **kwargs))
            box["float0"] = {i: x for i, x in enumerate(leaves) if is_float0(x)}
            return [x for x in leaves if not is_float0(x)]

        graph = trace_with_signature(without_float0, signature, name=self.__name__, hints=hints)
        graph.out_tree = _OutputTree(box["tree"], box["float0"]) if box["float0"] \
            else box["tree"]
        return graph

    def lower(self, *args: Any, **kwargs: Any) -> Lowered:
        return self.trace(*args, **kwargs).lower()

    def trace(self, *args: Any, **kwargs: Any) -> "Traced":
        """JAX's ``jit(f).trace(*args)``: the traced graph, to lower or inspect."""
        signature, _, dyn_args, dyn_kwargs = self._signature(args, kwargs)
        graph = self._trace(signature, dyn_args, dyn_kwargs)
        return Traced(graph, self._out_shapes(graph))

    def eval_shape(self, *args: Any, **kwargs: Any) -> Any:
        """The results' shapes and dtypes (``ShapeDtypeStruct``s), nothing computed."""
        return self.trace(*args, **kwargs).out_info

    def clear_cache(self) -> None:
        """Forget the traced and compiled programs (this function's, every ``jit`` of it)."""
        with self._lock:
            for cache in (self._cache, self._fast_cache, self._flat_cache):
                cache.clear()

    def _compiled_for(self, signature: Signature, dyn_args: tuple, dyn_kwargs: dict
                      ) -> Compiled | TieredProgram:
        """The program of ``signature``: traced (once, whatever the threads) and
        compiled here, or tiered: compiled in the background."""
        compiled = self._cache.get(signature)
        if compiled is None:
            with self._lock:  # one trace and one compile per signature, whatever the threads
                compiled = self._cache.get(signature)
                if compiled is None:
                    start = time.perf_counter()
                    graph = self._trace(signature, dyn_args, dyn_kwargs)
                    log.log(log_level(), "%s: traced %d equations in %.1f ms", self.__name__,
                            len(graph.equations), 1e3 * (time.perf_counter() - start))
                    out_shapes = self._out_shapes(graph)
                    if self._is_tiered():
                        compiled = self._start_tiers(graph, out_shapes)
                    else:
                        compiled = Compiled(graph, out_shapes, load_code=False)
                        compiled.compile_now()
                    self._cache[signature] = compiled
        return compiled

    def _is_tiered(self) -> bool:
        return self.tiered if self.tiered is not None else tier_mode() in ("tiered", "reference")

    def _start_tiers(self, graph: Graph, out_shapes: list[Shape]) -> TieredProgram:
        """A program served by tier 0 until its compiled code is ready: built
        on a background thread, which loads what the disk cache holds and has
        the rest compiled by worker processes."""
        program = TieredProgram(graph, out_shapes, self.__name__)
        if self.tiered is None and tier_mode() == "reference":
            return program  # tier 0 only: nothing compiled
        compile_in_background(lambda: Compiled(graph, out_shapes, load_code=False), program,
                              lambda c: self._replace(program, c))
        return program

    def _replace(self, program: TieredProgram, compiled: Compiled) -> None:
        """Put ``compiled`` wherever ``program`` is cached."""
        with self._lock:
            for cache in (self._cache, self._fast_cache, self._flat_cache):
                for key, value in list(cache.items()):
                    if value is program:
                        cache[key] = compiled

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if _DISABLED:  # inside numxla.disable_jit(): run the Python function eagerly
            return self.fn(*args, **kwargs)
        if not kwargs and not self._has_static:
            # the common case: positional NumPy arrays only
            key = tuple([(a.dtype, a.shape) if type(a) in _PLAIN_ARRAYS else _NO_KEY
                         for a in args])
            compiled = self._flat_cache.get(key)
            if compiled is not None:
                results = compiled.call_flat(args)
                if config.jax_debug_nans or config.jax_debug_infs:
                    self._check_special(results, args, kwargs)
                return compiled.graph.out_tree.unflatten(results)
        if self._has_static:
            dyn_args, dyn_kwargs, static_pos, static_kw = split_static(
                args, kwargs, self.static_argnums, self.static_argnames)
        else:
            dyn_args, dyn_kwargs, static_pos, static_kw = args, kwargs, (), ()
        leaves, in_tree = pytree.flatten((dyn_args, dyn_kwargs))
        leaf_keys = tuple(map(_leaf_key, leaves))
        fast_key = (in_tree, static_pos, static_kw, leaf_keys)
        compiled = self._fast_cache.get(fast_key) if None not in leaf_keys else None
        if compiled is None:
            if any(isinstance(x, Tracer) for x in leaves):
                return self.fn(*args, **kwargs)  # under an enclosing trace: inline
            signature, _, _, _ = self._signature(args, kwargs)
            compiled = self._compiled_for(signature, dyn_args, dyn_kwargs)
            if isinstance(compiled, TieredProgram) and compiled.compiled is not None:
                compiled = compiled.compiled  # it switched meanwhile
            if None not in leaf_keys:
                self._fast_cache[fast_key] = compiled
                if not kwargs and not self._has_static and all(
                        type(a) in _PLAIN_ARRAYS for a in args):
                    self._flat_cache[tuple((a.dtype, a.shape) for a in args)] = compiled
        results = compiled.call_flat(leaves)
        if config.jax_debug_nans or config.jax_debug_infs:
            self._check_special(results, args, kwargs)
        return compiled.graph.out_tree.unflatten(results)

    def _check_special(self, results: Sequence[Any], args: tuple, kwargs: dict) -> None:
        """``jax_debug_nans``/``jax_debug_infs``: a NaN (inf) in the results
        reruns the function eagerly, so the op that made it raises, as JAX's
        de-optimized rerun does; if none does, the jit call raises."""
        try:
            check_special_values(f"jit({self.__name__})", [np.asarray(r) for r in results])
        except FloatingPointError:
            self.fn(*args, **kwargs)
            raise

    def cache_size(self) -> int:
        """How many signatures have been traced (each compiled, or compiling)."""
        return len(self._cache)

    def programs(self) -> list[Compiled | TieredProgram]:
        """The program of each traced signature: a ``Compiled``, or a
        ``TieredProgram`` while its compiled code builds (or if it failed)."""
        return list(self._cache.values())


class _OutputTree:
    """A traced function's output structure, with the float0 results (the
    gradients of integer inputs: no data) that are not graph outputs put
    back when the graph's results are unflattened."""

    def __init__(self, tree: pytree.TreeDef, float0: dict[int, np.ndarray]):
        self.tree = tree
        self.float0 = float0

    def unflatten(self, flat: Sequence[Any]) -> Any:
        it = iter(flat)
        return self.tree.unflatten([self.float0[i] if i in self.float0 else next(it)
                                    for i in range(self.tree.num_leaves)])

    def __str__(self) -> str:
        return str(self.tree)


# JAX's jit options that change nothing here (buffers are never donated, there
# is one CPU device and no sharding): accepted so JAX programs run unchanged
_JAX_ONLY_OPTIONS = ("donate_argnums", "donate_argnames", "inline", "backend", "device",
                     "keep_unused", "abstracted_axes", "compiler_options", "in_shardings",
                     "out_shardings")


def jit(fn: Callable | None = None, *, static_argnums: int | Sequence[int] | None = None,
        static_argnames: str | Sequence[str] | None = None, in_layouts: Any = None,
        out_layouts: Any = None, tiered: bool | None = None, **jax_options: Any) -> Any:
    """Compile ``fn`` with Numba, once per abstract signature.

    ``tiered`` (default: ``NUMXLA_TIERED``, on unless it is ``0``): the first
    calls of a signature whose code is not in the disk cache run at once
    through the reference semantics while the compiled program builds in a
    background process; calls switch to it when it is ready.
    ``tiered=False`` waits for the compiled program instead.

    ``in_layouts``: one entry per positional argument — ``None``, a
    ``Layout``, layout text (``"{0,1}"``), shape text
    (``"f32[3,5]{0,1:T(2,2)}"``) or a ``minor_to_major`` tuple — giving the
    layout the compiled code reads that argument in.  ``out_layouts``: the
    same, one per output leaf.  Usable as ``@jit`` or ``@jit(static_argnums=1)``.
    JAX's ``donate_argnums``, ``inline``, ``backend``, ``device``... are accepted
    and change nothing.
    """
    unknown = set(jax_options) - set(_JAX_ONLY_OPTIONS)
    if unknown:
        raise TypeError(f"jit() got unexpected keyword argument(s) {sorted(unknown)}")
    if fn is None:
        return functools.partial(jit, static_argnums=static_argnums,
                                 static_argnames=static_argnames, in_layouts=in_layouts,
                                 out_layouts=out_layouts, tiered=tiered)
    return JittedFunction(fn, static_argnums=static_argnums, static_argnames=static_argnames,
                          in_layouts=in_layouts, out_layouts=out_layouts, tiered=tiered)
