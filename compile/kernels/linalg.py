"""The FFT, Cholesky and triangular-solve kernels generated code calls
(``compile/lowering/fft_linalg.py`` writes the calls)."""
from __future__ import annotations

import math

import numpy as np
from numba import njit, types

__all__ = ["fft_axis", "fft_lines", "cholesky_lower", "substitute"]


# -- FFT helpers called from generated code ---------------------------------------------------

@njit(cache=True, nogil=True)
def _radix2(a, tw):
    """In-place forward FFT of ``a`` (length n a power of two); ``tw[k] =
    exp(-2 pi i k / n)`` for ``k < n / 2``."""
    n = a.shape[0]
    j = 0
    for i in range(1, n):  # bit-reversal permutation
        bit = n >> 1
        while j & bit:
            j ^= bit
            bit >>= 1
        j |= bit
        if i < j:
            a[i], a[j] = a[j], a[i]
    size = 2
    while size <= n:
        half = size // 2
        step = n // size
        for start in range(0, n, size):
            for k in range(half):
                w = tw[k * step]
                u = a[start + k]
                v = a[start + k + half] * w
                a[start + k] = u + v
                a[start + k + half] = u - v
        size *= 2


@njit(cache=True, nogil=True)
def fft_lines(w, outer, n, inner, inverse):
    """Transform ``w`` (1-D complex128, row-major ``[outer, n, inner]``) in place
    along its middle axis: the DFT, or the inverse DFT scaled by ``1 / n``.

    A length that is not a power of two goes through Bluestein's algorithm: with
    the chirp ``c[k] = exp(-i pi k^2 / n)``, ``X[k] = c[k] * (a * f)[k]`` where
    ``a[j] = x[j] c[j]`` and ``f[j] = conj(c[j])`` (both ends), a circular
    convolution of a power-of-two length ``m >= 2n - 1`` done by FFTs."""
    if n <= 1:
        return
    power_of_two = (n & (n - 1)) == 0
    m = n  # the power-of-two length transformed
    if not power_of_two:
        m = 1
        while m < 2 * n - 1:
            m *= 2
    tw = np.empty(m // 2, np.complex128)
    for k in range(m // 2):  # every twiddle from its own angle
        angle = -2.0 * math.pi * k / m
        tw[k] = complex(math.cos(angle), math.sin(angle))
    chirp = np.empty(n, np.complex128)
    filt = np.zeros(m, np.complex128)
    if not power_of_two:
        for k in range(n):
            angle = -math.pi * ((k * k) % (2 * n)) / n  # k^2 mod 2n keeps the angle exact
            chirp[k] = complex(math.cos(angle), math.sin(angle))
            filt[k] = chirp[k].conjugate()
            if k:
                filt[m - k] = filt[k]
        _radix2(filt, tw)
    work = np.empty(m, np.complex128)
    for o in range(outer):
        for i in range(inner):
            base = o * n * inner + i
            for j in range(n):
                v = w[base + j * inner]
                work[j] = v.conjugate() if inverse else v
            if power_of_two:
                _radix2(work, tw)
            else:
                for j in range(n):
                    work[j] *= chirp[j]
                for j in range(n, m):
                    work[j] = 0
                _radix2(work, tw)
                for j in range(m):  # inverse FFT of the product, as conj(FFT(conj(.))) / m
                    work[j] = (work[j] * filt[j]).conjugate()
                _radix2(work, tw)
                for j in range(n):
                    work[j] = chirp[j] * work[j].conjugate() / m
            for j in range(n):
                w[base + j * inner] = work[j].conjugate() / n if inverse else work[j]


def _fft_entry():
    """:func:`fft_lines` called through a symbol (:mod:`compile.extern`): one
    compile per process, neither linked into nor specialised for each graph
    (called with constant sizes, Numba compiled it again for every shape)."""
    from ..extern import Entry
    i = types.int64
    sig = (types.Array(types.complex128, 1, "C"), i, i, i, types.boolean)
    return Entry("fft_axis", fft_lines, sig, outputs=(0,)).make_intrinsic()


fft_axis = _fft_entry()


@njit(cache=True, nogil=True)
def cholesky_lower(l, failed):
    """In place, each ``l[b]`` (its lower triangle holding the matrix) becomes its
    Cholesky factor, column by column (Cholesky–Banachiewicz, the reference's
    order); ``failed[b]`` is set where a pivot is NaN (not positive definite)."""
    nb, n, _ = l.shape
    zero = np.zeros(1, l.dtype)[0]
    for b in range(nb):
        m = l[b]
        for j in range(n):
            s = zero
            for k in range(j):
                s += m[j, k] * np.conj(m[j, k])
            d = np.sqrt((m[j, j] - s).real)
            if np.isnan(d):
                failed[b] = True
            m[j, j] = d
            for i in range(j + 1, n):
                s = zero
                for k in range(j):
                    s += m[i, k] * np.conj(m[j, k])
                m[i, j] = (m[i, j] - s) / d


@njit(cache=True, nogil=True)
def substitute(s, z, lower, unit):
    """Solve ``s[b] @ x = z[b]`` in place of ``z[b]`` for triangular ``s[b]``
    (lower: forward substitution, else backward; ``unit``: the diagonal is ones),
    dividing by the diagonal as it is."""
    nb, m, nz = z.shape
    acc = np.empty(nz, z.dtype)
    for b in range(nb):
        sb = s[b]
        zb = z[b]
        for step in range(m):
            i = step if lower else m - 1 - step
            acc[:] = 0
            lo, hi = (0, i) if lower else (i + 1, m)  # the unknowns already solved
            for j in range(lo, hi):
                coef = sb[i, j]
                for c in range(nz):
                    acc[c] += coef * zb[j, c]
            for c in range(nz):
                if unit:
                    zb[i, c] = zb[i, c] - acc[c]
                else:
                    zb[i, c] = (zb[i, c] - acc[c]) / sb[i, i]
