"""``jax.experimental.jet``: Taylor-mode propagation of truncated series.

Convention (JAX's): the series hold *derivative* coefficients.  Input ``i``
follows ``x(t) = x0 + x1 t + x2 t^2/2! + ... + xK t^K/K!`` (``x0`` its primal,
``x1..xK`` its series terms); the results are the output's value and
derivatives ``y_k = d^k/dt^k fun(x(t))`` at ``t = 0``, ``k = 1..K``.

Method: nested forward mode on the scalar ``t``.  ``x(t)`` is built in Horner
form (adds and multiplies only, so its derivatives are exact) and
``g(t) = fun(x(t))``; ``D_0(t) = [g(t)]`` and ``D_k(t)`` appends to
``D_{k-1}(t)`` the tangent of its last entry, one ``jvp`` of ``D_{k-1}``.
Every op numxla differentiates forward is supported, with no Taylor rule
per op.  Cost: each order differentiates the previous level, so ``K`` terms
cost about ``3^K`` evaluations of ``fun`` (JAX's per-op Taylor rules cost
``O(K^2)``); meant for the few terms ``jet`` is used with.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

import numxla.primitives as lax
from numxla.autodiff.forward import jvp_flat
from numxla.autodiff.rules import instantiate
from numxla.tracer import pytree
from numxla.tracer.core import abstractify, default_float

__all__ = ["jet"]


def _check_arguments(primals: Any, series: Any) -> int:
    """The number of series terms, after checking the arguments' form."""
    for name, value in (("primals", primals), ("series", series)):
        if not isinstance(value, (tuple, list)):
            raise TypeError(f"jet: {name} must be a tuple or list with one entry per argument "
                            f"of fun, got {type(value).__name__}")
    if len(primals) != len(series):
        raise ValueError(f"jet: {len(primals)} primals but {len(series)} series; give one "
                         f"list of terms per argument")
    for i, terms in enumerate(series):
        if not isinstance(terms, (tuple, list)):
            raise TypeError(f"jet: series[{i}] must be a list of Taylor terms, got "
                            f"{type(terms).__name__}")
    orders = sorted({len(terms) for terms in series})
    if len(orders) > 1:
        raise ValueError(f"jet terms have inconsistent lengths for different arguments: "
                         f"{[len(terms) for terms in series]}")
    return orders[0] if orders else 0


def _leaf_terms(primals: Sequence[Any], series: Sequence[Sequence[Any]], order: int
                ) -> tuple[list[Any], list[list[Any]], pytree.TreeDef]:
    """The primal leaves, each leaf's ``order`` terms (cast to its type) and
    the primals' structure."""
    leaves, terms = [], []
    for i, (primal, arg_terms) in enumerate(zip(primals, series)):
        p_leaves, p_tree = pytree.flatten(primal)
        per_term = []
        for j, term in enumerate(arg_terms):
            t_leaves, t_tree = pytree.flatten(term)
            if t_tree != p_tree:
                raise ValueError(f"jet: series[{i}][{j}] has the structure {t_tree}, its "
                                 f"primal {p_tree}")
            per_term.append(t_leaves)
        for k, x in enumerate(p_leaves):
            aval = abstractify(x)
            if not (aval.element_type.is_floating or aval.element_type.is_complex):
                raise TypeError(f"jet: primals[{i}] has a {aval.element_type.short_name} "
                                f"leaf; jet differentiates, so primals must be floating point")
            leaf_terms = []
            for j in range(order):
                term = per_term[j][k]
                t_aval = abstractify(term)
                if t_aval.dimensions != aval.dimensions:
                    raise ValueError(f"jet: series[{i}][{j}] has shape {t_aval.dimensions}, "
                                     f"its primal {aval.dimensions}")
                if t_aval.element_type is not aval.element_type:
                    term = lax.convert_element_type(term, aval.element_type)
                leaf_terms.append(term)
            leaves.append(x)
            terms.append(leaf_terms)
    _, tree = pytree.flatten(tuple(primals))
    return leaves, terms, tree


def _horner(x0: Any, terms: Sequence[Any], t: Any) -> Any:
    """``x0 + sum_m terms[m-1] t^m / m!`` (adds and multiplies only)."""
    if not terms:
        return x0
    t = t if abstractify(t).element_type is abstractify(x0).element_type else \
        lax.convert_element_type(t, abstractify(x0).element_type)
    acc = terms[-1]
    for m in range(len(terms) - 1, 0, -1):
        acc = terms[m - 1] + (t / (m + 1)) * acc
    return x0 + t * acc


def jet(fun: Callable[..., Any], primals: Sequence[Any], series: Sequence[Sequence[Any]]
        ) -> tuple[Any, Any]:
    """``(fun(*primals), series_out)``: ``series_out`` has ``fun``'s output
    structure with each leaf a list of its first ``K`` derivative
    coefficients, given ``K`` terms per argument in ``series`` (see the
    module docstring for the convention)."""
    if not callable(fun):
        raise TypeError(f"jet: fun must be callable, got {type(fun).__name__}")
    order = _check_arguments(primals, series)
    leaves, terms, in_tree = _leaf_terms(primals, series, order)
    box: dict[str, Any] = {}

    def taylor(t: Any) -> list[Any]:
        xs = [_horner(x0, ts, t) for x0, ts in zip(leaves, terms)]
        out, box["tree"] = pytree.flatten(fun(*in_tree.unflatten(xs)))
        return out

    def derivatives(k: int) -> Callable[[Any], list[Any]]:
        """``t -> [*g(t), *g'(t), ..., *g^(k)(t)]`` (each block one per output leaf)."""
        if k == 0:
            return taylor
        lower = derivatives(k - 1)

        def fn(t: Any) -> list[Any]:
            outs, tangents = jvp_flat(lower, [t], [one])
            n = len(outs) // k
            return outs + [instantiate(tangent) for tangent in tangents[-n:]]
        return fn

    dtype = np.result_type(*[abstractify(x).dtype for x in leaves]) if leaves else \
        default_float().numpy_dtype
    if dtype.kind == "c":
        dtype = np.finfo(dtype).dtype  # t is real
    one = np.ones((), dtype)
    flat = derivatives(order)(np.zeros((), dtype)) if order else taylor(np.zeros((), dtype))
    tree = box["tree"]
    n = tree.num_leaves
    primal_out = tree.unflatten(flat[:n])
    series_out = tree.unflatten([[flat[(j + 1) * n + i] for j in range(order)]
                                 for i in range(n)])
    return primal_out, series_out
