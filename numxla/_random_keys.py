"""Keys of ``numxla.random``: raw ``uint32[..., 2]`` arrays (``PRNGKey``) and
typed key arrays (``key``), the check every function applies to its key, and
the functions on keys (``split``, ``fold_in``, ``key_data``...).

A typed key array (:class:`KeyArray`, JAX's ``key<fry>`` arrays) wraps raw
threefry data: its ``shape`` is the data's without the trailing 2 and its
``dtype`` is :data:`KEY_DTYPE` (printed ``key<fry>``, a subtype of
``numxla.dtypes.prng_key``). It is a pytree node whose one child is the data,
so the transforms (``jit`` arguments and results, ``vmap``, ``grad``,
``lax.scan``/``fori_loop`` carries...) see a ``uint32`` array and rebuild the
key array around what they return: none of them knows key types. Every
sampler unwraps it, so a typed key draws what the raw key of the same seed
draws, and ``split``/``fold_in``/``clone`` return keys of the kind they get.

Where this shows, unlike JAX: pytree functions see the raw data as the leaf
(JAX's key arrays are leaves), a negative ``vmap`` axis counts from the
data's trailing 2, ``isinstance(k, jax.Array)`` is False, and of the
``jnp`` functions only ``stack`` and ``concatenate`` take key arrays (their
methods do: indexing, iteration, ``reshape``, ``T``, ``==``...).
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

import numxla.primitives as lax
import numxla.primitives.numpy as xnp
from numxla.dtypes import prng_key
from numxla.tracer import pytree
from numxla.tracer.core import Tracer, abstractify

from ._random_threefry import fold_in_key, seed_key, split_key

__all__ = ["KeyArray", "KEY_DTYPE", "check_key", "PRNGKey", "key", "key_data", "wrap_key_data",
           "key_impl", "key_dtype", "clone", "split", "fold_in"]


class _KeyDTypeMeta(type):
    def __repr__(cls) -> str:
        return cls.name

    __str__ = __repr__


class KEY_DTYPE(prng_key, metaclass=_KeyDTypeMeta):  # noqa: N801 (a dtype)
    """The element type of threefry key arrays, ``key<fry>``: a NumPy scalar
    type under ``prng_key``, so ``issubdtype(k.dtype, prng_key)`` holds and
    ``issubdtype(k.dtype, np.floating)`` does not."""
    name = "key<fry>"
    type = prng_key
    itemsize = 8


class KeyArray:
    """Typed keys: ``key<fry>[*shape]`` over raw ``uint32[*shape, 2]`` data."""
    __slots__ = ("_data",)
    dtype = KEY_DTYPE

    def __init__(self, data: Any):
        self._data = data

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(abstractify(self._data).dimensions[:-1])

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape))

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def __getitem__(self, index: Any) -> "KeyArray":
        index = index if isinstance(index, tuple) else (index,)
        # the key axes only: an Ellipsis must not reach the data's last axis
        index = (*index, slice(None)) if any(i is Ellipsis for i in index) else (*index, Ellipsis)
        return KeyArray(xnp.asarray(self._data)[index])

    def reshape(self, *shape: Any) -> "KeyArray":
        shape = shape[0] if len(shape) == 1 and isinstance(shape[0], Sequence) else shape
        known = int(np.prod([d for d in shape if d != -1]))
        shape = tuple(self.size // max(known, 1) if d == -1 else int(d) for d in shape)
        return KeyArray(lax.reshape(self._data, (*shape, 2)))

    def ravel(self) -> "KeyArray":
        return self.reshape(-1)

    flatten = ravel

    def squeeze(self, axis: Any = None) -> "KeyArray":
        if axis is None:
            axis = tuple(i for i, d in enumerate(self.shape) if d == 1)
        axes = (axis,) if isinstance(axis, int) else tuple(axis)
        return KeyArray(xnp.squeeze(self._data, tuple(a % self.ndim for a in axes)))

    def transpose(self, *axes: Any) -> "KeyArray":
        axes = axes[0] if len(axes) == 1 and isinstance(axes[0], Sequence) else axes
        axes = tuple(axes) if axes else tuple(reversed(range(self.ndim)))
        return KeyArray(xnp.transpose(self._data, (*(a % self.ndim for a in axes), self.ndim)))

    @property
    def T(self) -> "KeyArray":  # noqa: N802 (NumPy's name)
        return self.transpose()

    def swapaxes(self, a: int, b: int) -> "KeyArray":
        axes = list(range(self.ndim))
        axes[a], axes[b] = axes[b], axes[a]
        return self.transpose(axes)

    def copy(self) -> "KeyArray":
        return KeyArray(self._data)

    def __numxla_key_data__(self) -> Any:
        """The raw data, for the ``jnp`` functions that take key arrays
        (``stack``, ``concatenate``)."""
        return self._data

    def block_until_ready(self) -> "KeyArray":
        return self

    def __eq__(self, other: Any) -> Any:  # type: ignore[override]
        if not isinstance(other, KeyArray):
            return NotImplemented
        same = lax.eq(*xnp.broadcast_arrays(self._data, other._data))
        return lax.reduce_and(same, (len(abstractify(same).dimensions) - 1,))

    def __ne__(self, other: Any) -> Any:  # type: ignore[override]
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else lax.bitwise_not(eq)

    __hash__ = None  # type: ignore[assignment]  (arrays are not hashable)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        raise TypeError("a key<fry> array cannot be converted to a NumPy array: use "
                        "numxla.random.key_data(keys) for its uint32 data")

    def __repr__(self) -> str:
        if isinstance(self._data, Tracer):
            return f"Traced<key<fry>[{','.join(map(str, self.shape))}]>"
        return f"Array({self.shape}, dtype=key<fry>) overlaying:\n{np.asarray(self._data)}"


pytree.register_pytree_node(KeyArray, lambda k: ((k._data,), None),
                            lambda _, children: KeyArray(children[0]))


def check_key(name: str, key: Any, batched: bool = False) -> Any:
    """The raw ``uint32[2]`` data of ``key`` (``uint32[..., 2]`` when
    ``batched``), typed or raw, or a TypeError/ValueError naming ``name``."""
    if isinstance(key, KeyArray):
        key = key._data
    elif not isinstance(key, (Tracer, np.ndarray)) and not hasattr(key, "__numxla_aval__"):
        key = np.asarray(key)     # a list, say
    aval = abstractify(key)
    dims = aval.dimensions
    if aval.dtype != np.uint32 or not dims or dims[-1] != 2:
        raise TypeError(f"{name}: a key is a key<fry> array (from key) or a uint32[2] array "
                        f"(from PRNGKey), got {aval.dtype}{list(dims)}")
    if not batched and len(dims) != 1:
        raise ValueError(f"{name} accepts a single key, but was given a key array of shape "
                         f"{dims[:-1]} != (). Use vmap for batching.")
    return key


def _like(key: Any, raw: Any) -> Any:
    """``raw`` keys of ``key``'s kind: typed if ``key`` is."""
    return KeyArray(raw) if isinstance(key, KeyArray) else raw


def _check_impl(impl: Any) -> None:
    if impl not in (None, "threefry2x32", KEY_DTYPE) and \
            getattr(impl, "name", None) != "threefry2x32":
        raise ValueError(f"numxla.random implements threefry2x32 only, got impl={impl!r}")


def PRNGKey(seed: Any, *, impl: Any = None) -> Any:  # noqa: N802 (JAX's name)
    """A raw ``uint32[2]`` key from an integer seed: ``[seed >> 32, seed & 0xFFFFFFFF]``
    (the high word is 0 without x64, where the seed is read modulo 2**32)."""
    _check_impl(impl)
    return seed_key(seed)


def key(seed: Any, *, impl: Any = None, dtype: Any = None) -> KeyArray:
    """A typed key (``key<fry>[]``) from an integer seed; its data is
    ``PRNGKey(seed)``."""
    _check_impl(impl if dtype is None else dtype)
    return KeyArray(seed_key(seed))


def key_data(keys: Any) -> Any:
    """The ``uint32[..., 2]`` data of keys (raw keys are their own data)."""
    return check_key("key_data", keys, batched=True)


def wrap_key_data(key_bits_array: Any, *, impl: Any = None, dtype: Any = None) -> KeyArray:
    """Typed keys over ``uint32[..., 2]`` data."""
    _check_impl(impl if dtype is None else dtype)
    if isinstance(key_bits_array, KeyArray):
        raise TypeError("wrap_key_data: expected uint32[..., 2] key data, got a key<fry> "
                        "array (it is wrapped already)")
    return KeyArray(check_key("wrap_key_data", key_bits_array, batched=True))


def key_impl(keys: Any) -> str:
    """The name of the keys' PRNG implementation."""
    check_key("key_impl", keys, batched=True)
    return "threefry2x32"


def key_dtype(impl_spec: Any = None) -> type:
    """The dtype of typed keys of ``impl_spec`` (threefry2x32 only)."""
    _check_impl(impl_spec)
    return KEY_DTYPE


def clone(key: Any) -> Any:
    """The same key (JAX's ``clone`` matters only for its key-reuse checker)."""
    check_key("clone", key, batched=True)
    return key


def split(key: Any, num: int | Sequence[int] = 2) -> Any:
    """``num`` new keys (or a shape of keys), of ``key``'s kind."""
    raw = check_key("split", key)
    return _like(key, split_key(raw, tuple(num) if isinstance(num, Sequence) else (int(num),)))


def fold_in(key: Any, data: Any) -> Any:
    """A new key (of ``key``'s kind) from ``key`` and a 32-bit integer ``data``."""
    raw = check_key("fold_in", key)
    if np.ndim(data) if not isinstance(data, Tracer) else abstractify(data).dimensions:
        raise TypeError(f"fold_in accepts a scalar, but was given an array of shape "
                        f"{np.shape(data)} != (). Use vmap for batching.")
    if isinstance(data, (int, np.integer)):
        data = np.uint32(int(data) % 2 ** 32)
    return _like(key, fold_in_key(raw, lax.convert_element_type(data, np.uint32)))
