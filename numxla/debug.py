"""``jax.debug``: ``print`` and ``callback`` that run eagerly and inside
compiled code.  Each is a side-effecting ``custom_call`` of a host function
(its results none), so ``jit`` keeps it and calls back into Python with the
values of that call."""
from __future__ import annotations

import builtins
from typing import Any, Callable

from numxla.primitives.side_effects import custom_call, register_custom_call_target
from numxla.tracer import pytree

__all__ = ["print", "callback", "visualize_array_sharding", "visualize_sharding",
           "inspect_array_sharding"]

_targets: dict[Any, str] = {}  # (function or format, argument structure) -> target name


def _target(key: Any, host: Callable[..., None]) -> str:
    name = _targets.get(key)
    if name is None:
        name = _targets[key] = f"numxla_debug_{len(_targets)}"
        register_custom_call_target(name, host)
    return name


def callback(fn: Callable[..., Any], *args: Any, ordered: bool = False, **kwargs: Any) -> None:
    """Call ``fn(*args, **kwargs)`` on the host with the arrays' values, when
    the program reaches this point (its result is ignored).  Calls always run
    in program order (``ordered`` is accepted)."""
    leaves, tree = pytree.flatten((args, kwargs))

    def host(*values: Any) -> tuple:
        call_args, call_kwargs = tree.unflatten(values)
        fn(*call_args, **call_kwargs)
        return ()
    custom_call(_target((fn, tree), host), leaves, [], has_side_effect=True)


def print(fmt: str, *args: Any, ordered: bool = False, **kwargs: Any) -> None:  # noqa: A001
    """``print(fmt.format(*args, **kwargs))`` with the values, eagerly or compiled
    (JAX's name; in program order, ``ordered`` or not)."""
    leaves, tree = pytree.flatten((args, kwargs))

    def host(*values: Any) -> tuple:
        call_args, call_kwargs = tree.unflatten(values)
        builtins.print(fmt.format(*call_args, **call_kwargs))
        return ()
    custom_call(_target((fmt, tree), host), leaves, [], has_side_effect=True)


def inspect_array_sharding(value: Any, *, callback: Callable[[Any], None]) -> None:
    """Call ``callback`` with ``value``'s sharding (numxla: its recorded one,
    else the single device's), when traced or run eagerly."""
    from numxla.sharding import sharding_of
    callback(sharding_of(value))


def visualize_sharding(shape: Any, sharding: Any, **kwargs: Any) -> None:
    """Print which device holds which block of an array of ``shape``: on
    numxla's one device, one block labelled with it."""
    devices = sorted(sharding.device_set, key=lambda d: getattr(d, "id", 0))
    label = " ".join(f"{d.platform.upper()} {d.id}" for d in devices) or "CPU 0"
    width = len(label) + 2
    builtins.print("\u250c" + "\u2500" * width + "\u2510")
    builtins.print("\u2502 " + label + " \u2502")
    builtins.print("\u2514" + "\u2500" * width + "\u2518")


def visualize_array_sharding(arr: Any, **kwargs: Any) -> None:
    """``visualize_sharding`` of an array's own shape and sharding."""
    from numxla.sharding import sharding_of
    visualize_sharding(getattr(arr, "shape", ()), sharding_of(arr), **kwargs)
