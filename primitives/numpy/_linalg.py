"""NumPy-style layer: products (``dot``, ``vdot``, ``inner``, ``outer``,
``tensordot``, ``einsum``, ``vecdot``, ``matvec``, ``vecmat``, ``kron``,
``cross``), lowered onto ``dot_general`` or element-wise ops (``matmul``
is in ``_core``).  Operands are promoted together first (Python scalars are
weak); ``precision`` and ``preferred_element_type`` go to ``dot_general``.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from numxla.tracer import core
from numxla.tracer.core import ShapeError, abstractify

from .. import elementwise as ew
from ..dot_conv import dot_general
from ..reductions import reduce_sum
from ..shape_ops import reshape as _lax_reshape, transpose as _lax_transpose
from ._core import multiply, where
from .._util import dims as _dims

__all__ = ["dot", "vdot", "inner", "outer", "tensordot", "einsum", "einsum_path", "vecdot",
           "matvec", "vecmat", "cross", "kron"]



def _contract(a: Any, b: Any, a_axes: Sequence[int], b_axes: Sequence[int],
              precision: Any, preferred_element_type: Any) -> Any:
    return dot_general(a, b, ((tuple(a_axes), tuple(b_axes)), ((), ())), precision,
                       preferred_element_type)


def _axis(op: str, axis: int, rank: int) -> int:
    if not -rank <= axis < rank:
        raise ShapeError(op, f"axis {axis} is out of range for rank {rank}")
    return axis % rank


def dot(a: Any, b: Any, *, precision: Any = None, preferred_element_type: Any = None) -> Any:
    """NumPy's ``dot``: a scalar operand multiplies; otherwise the last axis of
    ``a`` contracts with the only axis of a vector ``b`` or with ``b``'s
    second-to-last axis."""
    a, b = ew.promote(a, b)
    ra, rb = len(_dims(a)), len(_dims(b))
    if ra == 0 or rb == 0:
        return multiply(a, b)
    return _contract(a, b, (ra - 1,), (max(rb - 2, 0),), precision, preferred_element_type)


def inner(a: Any, b: Any, *, precision: Any = None, preferred_element_type: Any = None) -> Any:
    """NumPy's ``inner``: the last axes of ``a`` and ``b`` contract."""
    a, b = ew.promote(a, b)
    ra, rb = len(_dims(a)), len(_dims(b))
    if ra == 0 or rb == 0:
        return multiply(a, b)
    return _contract(a, b, (ra - 1,), (rb - 1,), precision, preferred_element_type)


def _ravel(x: Any) -> Any:
    return _lax_reshape(x, (int(np.prod(_dims(x), dtype=np.int64)),))


def outer(a: Any, b: Any) -> Any:
    """NumPy's ``outer``: ``out[i, j] = a.ravel()[i] * b.ravel()[j]``."""
    a, b = ew.promote(a, b)
    return _contract(_ravel(a), _ravel(b), (), (), None, None)


def _conj(x: Any) -> Any:
    import numxla.primitives as lax  # the complex element-wise ops live in another family
    if hasattr(lax, "conj"):
        return lax.conj(x)
    return lax.complex(lax.real(x), lax.neg(lax.imag(x)))


def vdot(a: Any, b: Any, *, precision: Any = None, preferred_element_type: Any = None) -> Any:
    """NumPy's ``vdot``: both operands flattened, ``a`` conjugated."""
    a, b = ew.promote(a, b)
    if len(_dims(a)) != 1 or len(_dims(b)) != 1:
        a, b = _ravel(a), _ravel(b)
    if abstractify(a).element_type.is_complex:
        a = _conj(a)
    if _dims(a) != _dims(b):
        raise ShapeError("vdot", f"operands must have the same number of elements, got "
                                 f"{_dims(a)[0]} and {_dims(b)[0]}", abstractify(a),
                         abstractify(b))
    return _contract(a, b, (0,), (0,), precision, preferred_element_type)


def tensordot(a: Any, b: Any, axes: int | Sequence[Any] = 2, *, precision: Any = None,
              preferred_element_type: Any = None) -> Any:
    """NumPy's ``tensordot``: ``axes=n`` contracts the last ``n`` axes of ``a``
    with the first ``n`` of ``b``; ``axes=(a_axes, b_axes)`` names them."""
    a, b = ew.promote(a, b)
    ra, rb = len(_dims(a)), len(_dims(b))
    if isinstance(axes, (int, np.integer)):
        n = int(axes)
        if not 0 <= n <= min(ra, rb):
            raise ShapeError("tensordot", f"axes={n} must be between 0 and the smaller rank "
                                          f"({min(ra, rb)})", abstractify(a), abstractify(b))
        a_axes, b_axes = tuple(range(ra - n, ra)), tuple(range(n))
    else:
        a_axes, b_axes = axes
        a_axes = (a_axes,) if isinstance(a_axes, (int, np.integer)) else tuple(a_axes)
        b_axes = (b_axes,) if isinstance(b_axes, (int, np.integer)) else tuple(b_axes)
        a_axes = tuple(_axis("tensordot", int(x), ra) for x in a_axes)
        b_axes = tuple(_axis("tensordot", int(x), rb) for x in b_axes)
    return _contract(a, b, a_axes, b_axes, precision, preferred_element_type)


# --------------------------------------------------------------------------
# einsum
# --------------------------------------------------------------------------

_ELLIPSIS_LABELS = "".join(chr(0x3B1 + i) for i in range(24))  # Greek: never user labels


def _parse_subscripts(subscripts: str, ranks: Sequence[int]) -> tuple[list[str], str]:
    """Input label strings (ellipses expanded, right-aligned) and the output labels."""
    spec = subscripts.replace(" ", "")
    inputs_text, arrow, output_text = spec.partition("->")
    inputs = inputs_text.split(",")
    if len(inputs) != len(ranks):
        raise ShapeError("einsum", f"subscripts {subscripts!r} name {len(inputs)} operands, "
                                   f"got {len(ranks)}")
    for term in inputs + [output_text]:
        bad = set(term.replace("...", "")) - set("abcdefghijklmnopqrstuvwxyz"
                                                 "ABCDEFGHIJKLMNOPQRSTUVWXYZ")
        if bad or term.count("...") > 1:
            raise ShapeError("einsum", f"subscripts {subscripts!r}: invalid term {term!r}")
    longest = 0
    expanded = []
    for term, rank in zip(inputs, ranks):
        named = len(term.replace("...", ""))
        if ("..." in term and named > rank) or ("..." not in term and named != rank):
            raise ShapeError("einsum", f"subscripts term {term!r} does not match an operand of "
                                       f"rank {rank}")
        width = rank - named if "..." in term else 0
        longest = max(longest, width)
        expanded.append((term, width))
    ell = _ELLIPSIS_LABELS[:longest]
    labels = [term.replace("...", ell[longest - width:]) for term, width in expanded]
    if arrow:
        output = output_text.replace("...", ell)
        if len(set(output)) != len(output):
            raise ShapeError("einsum", f"output subscripts {output_text!r} repeat a label")
        missing = set(output) - set("".join(labels))
        if missing:
            raise ShapeError("einsum", f"output labels {sorted(missing)} appear in no operand")
    else:
        counts = {c: "".join(labels).count(c) for c in set("".join(labels)) - set(ell)}
        output = ell + "".join(sorted(c for c, k in counts.items() if k == 1))
    return labels, output


def _sizes(labels: Sequence[str], operands: Sequence[Any]) -> dict[str, int]:
    """Each label's size; a size 1 broadcasts against another size."""
    sizes: dict[str, int] = {}
    for term, x in zip(labels, operands):
        for c, d in zip(term, _dims(x)):
            if sizes.get(c, 1) not in (1, d) and d != 1:
                raise ShapeError("einsum", f"label {c!r} has sizes {sizes[c]} and {d}",
                                 *(abstractify(o) for o in operands))
            sizes[c] = d if sizes.get(c, 1) == 1 else sizes[c]
    return sizes


def _take_diagonals(x: Any, term: str) -> tuple[Any, str]:
    """Repeated labels in one term (``"ii"``) select the diagonal."""
    while len(set(term)) != len(term):
        c = next(c for c in term if term.count(c) > 1)
        i, j = term.index(c), term.index(c, term.index(c) + 1)
        dims = _dims(x)
        eye = np.eye(dims[i], dtype=bool).reshape(
            [dims[i] if k == i else dims[j] if k == j else 1 for k in range(len(dims))])
        x = reduce_sum(where(eye, x, ew.convert_element_type(0, abstractify(x).element_type)),
                       (j,))
        term = term[:j] + term[j + 1:]
    return x, term


def _squeeze(x: Any, term: str, drop: set[str]) -> tuple[Any, str]:
    """Remove size-1 dimensions whose labels broadcast against a larger size."""
    keep = [k for k, c in enumerate(term) if c not in drop]
    if len(keep) == len(term):
        return x, term
    return _lax_reshape(x, [_dims(x)[k] for k in keep]), "".join(term[k] for k in keep)


def _sublist_subscripts(args: tuple) -> tuple[str, tuple]:
    """``(subscripts, operands)`` for the sublist form ``op0, sub0, op1, sub1,
    ..., [sub_out]``: each sublist holds ints (labels 0-51) or ``...``."""
    letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"

    def text(sub: Any) -> str:
        out = []
        for label in sub:
            if label is Ellipsis:
                out.append("...")
            elif isinstance(label, (int, np.integer)) and 0 <= label < len(letters):
                out.append(letters[int(label)])
            else:
                raise TypeError(f"einsum: sublist labels must be ints in [0, 52) or ..., "
                                f"got {label!r}")
        return "".join(out)
    operands, subs = args[0::2], args[1::2]
    if len(args) % 2:       # an odd count: the last entry is the output sublist
        operands, subs, out = args[:-1:2], args[1:-1:2], "->" + text(args[-1])
    else:
        out = ""
    return ",".join(text(s) for s in subs) + out, tuple(operands)


def einsum(subscripts: str, *operands: Any, optimize: Any = None, precision: Any = None,
           preferred_element_type: Any = None) -> Any:
    """NumPy's ``einsum`` (explicit ``->`` or implicit output, ``...``,
    repeated labels for diagonals, size-1 broadcasting), lowered to
    diagonal selection, ``reduce_sum`` and a left-to-right chain of
    ``dot_general``; ``optimize`` is accepted and ignored.  NumPy's sublist
    form ``einsum(a, [0, 1], b, [1, 2], [0, 2])`` is accepted too."""
    if not isinstance(subscripts, str):
        subscripts, operands = _sublist_subscripts((subscripts, *operands))
    operands = ew.promote(*operands)
    labels, output = _parse_subscripts(subscripts, [len(_dims(x)) for x in operands])
    sizes = _sizes(labels, operands)
    terms = []
    for x, term in zip(operands, labels):
        x, term = _take_diagonals(x, term)
        x, term = _squeeze(x, term, {c for c, d in zip(term, _dims(x)) if d == 1 != sizes[c]})
        terms.append((x, term))

    def needed(after: int) -> set[str]:
        return set(output).union(*(set(t) for _, t in terms[after:]))

    def sum_unneeded(x: Any, term: str, after: int, keep: str = "") -> tuple[Any, str]:
        """Sum over labels no later operand, ``keep`` or the output uses."""
        drop = [k for k, c in enumerate(term) if c not in needed(after) and c not in keep]
        if not drop:
            return x, term
        return reduce_sum(x, drop), "".join(c for k, c in enumerate(term) if k not in drop)

    acc, acc_term = sum_unneeded(*terms[0], 1)
    for k in range(1, len(terms)):
        x, term = sum_unneeded(*terms[k], k + 1, acc_term)
        later = needed(k + 1)
        shared = [c for c in acc_term if c in term]
        batch = [c for c in shared if c in later]
        contract = [c for c in shared if c not in later]
        acc = dot_general(acc, x, ((tuple(acc_term.index(c) for c in contract),
                                    tuple(term.index(c) for c in contract)),
                                   (tuple(acc_term.index(c) for c in batch),
                                    tuple(term.index(c) for c in batch))),
                          precision, preferred_element_type)
        acc_term = ("".join(batch) + "".join(c for c in acc_term if c not in shared)
                    + "".join(c for c in term if c not in shared))
    acc, acc_term = sum_unneeded(acc, acc_term, len(terms))
    if acc_term != output:
        acc = _lax_transpose(acc, tuple(acc_term.index(c) for c in output))
    if preferred_element_type is not None and len(terms) == 1:
        acc = ew.convert_element_type(acc, preferred_element_type)
    return acc


def einsum_path(subscripts: str, *operands: Any, optimize: Any = "greedy") -> tuple[list, str]:
    """NumPy's contraction order for ``einsum`` (only the operands' shapes matter;
    ``einsum`` here contracts left to right whatever the path)."""
    shaped = [np.broadcast_to(np.zeros((), abstractify(x).dtype), _dims(x)) for x in operands]
    return np.einsum_path(subscripts, *shaped, optimize=optimize)


def vecdot(x1: Any, x2: Any, /, *, axis: int = -1, precision: Any = None,
           preferred_element_type: Any = None) -> Any:
    """The dot product of vectors along ``axis`` (``x1`` conjugated), broadcasting
    the other dimensions."""
    from ._core import _broadcast_all
    x1, x2 = _broadcast_all(*ew.promote(x1, x2))
    if abstractify(x1).element_type.is_complex:
        x1 = _conj(x1)
    rank = len(_dims(x1))
    return reduce_sum(multiply(x1, x2), (_axis("vecdot", axis, rank),))


def matvec(x1: Any, x2: Any, /) -> Any:
    """Matrix-vector products: ``x1`` (..., M, N) by ``x2`` (..., N), batches broadcast."""
    from ._core import matmul
    out = matmul(x1, _lax_reshape(x2, _dims(x2) + (1,)))
    return _lax_reshape(out, _dims(out)[:-1])


def vecmat(x1: Any, x2: Any, /) -> Any:
    """Vector-matrix products: conj(``x1``) (..., M) by ``x2`` (..., M, N)."""
    from ._core import matmul
    x1, x2 = ew.promote(x1, x2)
    if abstractify(x1).element_type.is_complex:
        x1 = _conj(x1)
    out = matmul(_lax_reshape(x1, _dims(x1)[:-1] + (1, _dims(x1)[-1])), x2)
    return _lax_reshape(out, _dims(out)[:-2] + _dims(out)[-1:])


def kron(a: Any, b: Any) -> Any:
    """The Kronecker product: blocks ``a[i...] * b`` (ranks aligned by leading 1s)."""
    a, b = ew.promote(a, b)
    da, db = _dims(a), _dims(b)
    rank = max(len(da), len(db))
    da, db = (1,) * (rank - len(da)) + da, (1,) * (rank - len(db)) + db
    a = _lax_reshape(a, [n for d in da for n in (d, 1)])
    b = _lax_reshape(b, [n for d in db for n in (1, d)])
    return _lax_reshape(multiply(a, b), [x * y for x, y in zip(da, db)])


def cross(a: Any, b: Any, axisa: int = -1, axisb: int = -1, axisc: int = -1,
          axis: int | None = None) -> Any:
    """The cross product of 2- or 3-vectors along ``axisa``/``axisb`` (``axis``
    sets all three); 2-vectors have a zero third component, and two 2-vectors
    give the z component alone."""
    from ._core import _broadcast_all
    from ._indexing import moveaxis
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = ew.promote(a, b)
    a = moveaxis(a, axisa, -1)
    b = moveaxis(b, axisb, -1)
    na, nb = _dims(a)[-1], _dims(b)[-1]
    if na not in (2, 3) or nb not in (2, 3):
        raise ValueError("cross: incompatible dimensions for cross product (dimension must "
                         "be 2 or 3)")

    def part(x: Any, i: int) -> Any:
        n = _dims(x)[-1]
        if i >= n:
            return None
        return _lax_reshape(_slice_last(x, i), _dims(x)[:-1])

    a0, a1, a2 = (part(a, i) for i in range(3))
    b0, b1, b2 = (part(b, i) for i in range(3))

    def sub_mul(p, q, r, s):  # p*q - r*s with None meaning 0
        left = None if p is None or q is None else multiply(p, q)
        right = None if r is None or s is None else multiply(r, s)
        if right is None:
            return left
        return ew.neg(right) if left is None else ew.sub(*_broadcast_all(left, right))

    z = sub_mul(a0, b1, a1, b0)
    if na == 2 and nb == 2:
        return z
    x, y = sub_mul(a1, b2, a2, b1), sub_mul(a2, b0, a0, b2)
    x, y, z = _broadcast_all(x, y, z)
    rank = len(_dims(x))
    out = _stack_last([x, y, z])
    return moveaxis(out, -1, axisc if axisc >= 0 else rank + 1 + axisc)


def _slice_last(x: Any, i: int) -> Any:
    from ..shape_ops import slice_in_dim
    return slice_in_dim(x, i, i + 1, 1, len(_dims(x)) - 1)


def _stack_last(parts: Sequence[Any]) -> Any:
    from ..shape_ops import concatenate
    return concatenate([_lax_reshape(p, _dims(p) + (1,)) for p in parts], len(_dims(parts[0])))


core.OPERATORS.update({
    "attr:dot": lambda x: lambda b, *, precision=None, preferred_element_type=None: dot(
        x, b, precision=precision, preferred_element_type=preferred_element_type),
})
