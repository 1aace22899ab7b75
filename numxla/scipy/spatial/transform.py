"""``jax.scipy.spatial.transform``: ``Rotation`` (3-D rotations held as unit
quaternions, scalar last) and ``Slerp`` (spherical linear interpolation
between rotations).  Both are named tuples of arrays, so pytrees that pass
through ``jit``, ``vmap`` and ``grad``; leading dimensions of ``quat`` are a
batch of rotations."""
from __future__ import annotations

from typing import Any, NamedTuple, Sequence

import numpy as np

import numxla.primitives.numpy as xnp

from .._util import promote_inexact

__all__ = ["Rotation", "Slerp"]

_AXES = "xyz"
_SMALL_ANGLE = 1e-3    # below it, series replace the ratios of sines and angles
_GIMBAL_EPS = 1e-7     # a middle Euler angle this close to 0 or pi is a gimbal lock


def _norm2(x: Any) -> Any:
    return xnp.sum(x * x, axis=-1)


def _quat(vector: Any, scalar: Any) -> Any:
    return xnp.concatenate([vector, scalar[..., None]], axis=-1)


def _multiply(p: Any, q: Any) -> Any:
    """The quaternion product ``p q``: the rotation ``q`` followed by ``p``."""
    pv, pw, qv, qw = p[..., :3], p[..., 3], q[..., :3], q[..., 3]
    vector = pw[..., None] * qv + qw[..., None] * pv + xnp.cross(pv, qv)
    return _quat(vector, pw * qw - xnp.sum(pv * qv, axis=-1))


def _canonical(q: Any) -> Any:
    """``q`` or ``-q`` (the same rotation), whichever has a non-negative scalar."""
    return xnp.where(q[..., 3:] < 0, -q, q)


def _check_seq(fn: str, seq: str, exactly_three: bool) -> tuple[list[int], bool]:
    """The axis indices of an Euler sequence and whether it is extrinsic."""
    if not isinstance(seq, str) or not 1 <= len(seq) <= 3 or (exactly_three and len(seq) != 3):
        raise ValueError(f"Rotation.{fn}: seq must be a string of "
                         f"{'3' if exactly_three else '1 to 3'} axes, got {seq!r}")
    if not (set(seq) <= set(_AXES) or set(seq) <= set(_AXES.upper())):
        raise ValueError(f"Rotation.{fn}: seq must take its axes from 'xyz' (extrinsic) or "
                         f"'XYZ' (intrinsic), got {seq!r}")
    if any(a == b for a, b in zip(seq, seq[1:])):
        raise ValueError(f"Rotation.{fn}: consecutive axes of seq must differ, got {seq!r}")
    return [_AXES.index(c) for c in seq.lower()], seq.islower()


def _elementary(axis: int, angle: Any) -> Any:
    """The quaternion of a rotation by ``angle`` about coordinate ``axis``."""
    half = angle / 2
    zero = xnp.zeros_like(half)
    parts = [zero, zero, zero, xnp.cos(half)]
    parts[axis] = xnp.sin(half)
    return xnp.stack(parts, axis=-1)


def _wrap(angle: Any) -> Any:
    """``angle`` (within (-3 pi, 3 pi)) moved into [-pi, pi]."""
    angle = xnp.where(angle < -np.pi, angle + 2 * np.pi, angle)
    return xnp.where(angle > np.pi, angle - 2 * np.pi, angle)


def _euler_from_quat(q: Any, seq: str) -> Any:
    """Euler angles of ``seq`` from unit quaternions, by the direct method of
    Bernardes and Viollet (2022): the middle angle from the norms of two
    pairs of quaternion terms, the outer two from their half sum and half
    difference.  At a gimbal lock the last angle is set to 0."""
    axes, extrinsic = _check_seq("as_euler", seq, exactly_three=True)
    i, j, k = axes if extrinsic else axes[::-1]
    symmetric = i == k
    if symmetric:
        k = 3 - i - j
    sign = (i - j) * (j - k) * (k - i) // 2   # +1 for a cyclic order of the axes, else -1
    qi, qj, qk, w = q[..., i], q[..., j], q[..., k], q[..., 3]
    if symmetric:
        a, b, c, d = w, qi, qj, qk * sign
    else:
        a, b, c, d = w - qj, qi + qk * sign, qj + w, qk * sign - qi
    middle = 2 * xnp.arctan2(xnp.hypot(c, d), xnp.hypot(a, b))
    half_sum, half_diff = xnp.arctan2(b, a), xnp.arctan2(d, c)
    at_zero = xnp.abs(middle) < _GIMBAL_EPS
    at_pi = xnp.abs(middle - np.pi) < _GIMBAL_EPS
    locked = at_zero | at_pi
    locked_angle = xnp.where(at_zero, 2 * half_sum, 2 * half_diff)
    if extrinsic:   # the third angle (about k) is set to 0
        first = xnp.where(locked, xnp.where(at_zero, locked_angle, -locked_angle),
                          half_sum - half_diff)
        third = xnp.where(locked, 0, half_sum + half_diff)
    else:           # the third intrinsic angle is the first extrinsic one
        first = xnp.where(locked, 0, half_sum - half_diff)
        third = xnp.where(locked, locked_angle, half_sum + half_diff)
    if not symmetric:
        third, middle = third * sign, middle - np.pi / 2
    angles = [_wrap(first), middle, _wrap(third)]
    return xnp.stack(angles if extrinsic else angles[::-1], axis=-1)


class Rotation(NamedTuple):
    """Rotations in 3 dimensions, as unit quaternions ``quat`` (..., 4)
    ``(x, y, z, w)``.  ``r * s`` applies ``s`` then ``r``."""

    quat: Any

    # -- construction ----------------------------------------------------------------------------

    @classmethod
    def concatenate(cls, rotations: Sequence[Rotation]) -> Rotation:
        """The rotations of a sequence of ``Rotation``s, one after another."""
        return cls(xnp.concatenate([xnp.atleast_2d(r.quat) for r in rotations]))

    @classmethod
    def from_euler(cls, seq: str, angles: Any, degrees: bool = False) -> Rotation:
        """Rotations by ``angles`` (..., len(seq)) about the axes of ``seq``:
        lower case rotates about the fixed axes (extrinsic), upper case about
        the rotating ones (intrinsic)."""
        axes, extrinsic = _check_seq("from_euler", seq, exactly_three=False)
        (angles,) = promote_inexact(angles)
        angles = xnp.atleast_1d(angles)
        if angles.shape[-1] != len(seq):
            raise ValueError(f"Rotation.from_euler: angles must have {len(seq)} entries in their "
                             f"last dimension for seq {seq!r}, got shape {tuple(angles.shape)}")
        if degrees:
            angles = xnp.deg2rad(angles)
        quats = [_elementary(axis, angles[..., n]) for n, axis in enumerate(axes)]
        if extrinsic:
            quats = quats[::-1]
        q = quats[0]
        for other in quats[1:]:
            q = _multiply(q, other)
        return cls(q)

    @classmethod
    def from_matrix(cls, matrix: Any) -> Rotation:
        """Rotations from rotation matrices (..., 3, 3), by the largest of the
        four quaternion terms that the diagonal and trace give."""
        (m,) = promote_inexact(matrix)
        if m.shape[-2:] != (3, 3):
            raise ValueError(f"Rotation.from_matrix: matrix must have shape (..., 3, 3), "
                             f"got {tuple(m.shape)}")
        diagonal = xnp.diagonal(m, axis1=-2, axis2=-1)
        trace = xnp.sum(diagonal, axis=-1)
        candidates = []
        for i in range(3):
            j, k = (i + 1) % 3, (i + 2) % 3
            q = [None] * 4
            q[i] = 1 - trace + 2 * m[..., i, i]
            q[j] = m[..., j, i] + m[..., i, j]
            q[k] = m[..., k, i] + m[..., i, k]
            q[3] = m[..., k, j] - m[..., j, k]
            candidates.append(xnp.stack(q, axis=-1))
        candidates.append(xnp.stack([m[..., 2, 1] - m[..., 1, 2], m[..., 0, 2] - m[..., 2, 0],
                                     m[..., 1, 0] - m[..., 0, 1], 1 + trace], axis=-1))
        choice = xnp.argmax(xnp.concatenate([diagonal, trace[..., None]], axis=-1), axis=-1)
        q = xnp.take_along_axis(xnp.stack(candidates, axis=-2), choice[..., None, None],
                                axis=-2)[..., 0, :]
        return cls.from_quat(q)

    @classmethod
    def from_mrp(cls, mrp: Any) -> Rotation:
        """Rotations from modified Rodrigues parameters (..., 3)."""
        (p,) = promote_inexact(mrp)
        n2 = _norm2(p)
        return cls(_quat(2 * p, 1 - n2) / (1 + n2)[..., None])

    @classmethod
    def from_quat(cls, quat: Any) -> Rotation:
        """Rotations from quaternions (..., 4) ``(x, y, z, w)``, normalised."""
        (q,) = promote_inexact(quat)
        if q.ndim < 1 or q.shape[-1] != 4:
            raise ValueError(f"Rotation.from_quat: quat must have shape (..., 4), "
                             f"got {tuple(q.shape)}")
        return cls(q / xnp.linalg.norm(q, axis=-1, keepdims=True))

    @classmethod
    def from_rotvec(cls, rotvec: Any, degrees: bool = False) -> Rotation:
        """Rotations from rotation vectors (..., 3): axis times angle."""
        (r,) = promote_inexact(rotvec)
        if degrees:
            r = xnp.deg2rad(r)
        n2 = _norm2(r)
        small = n2 < _SMALL_ANGLE ** 2
        angle = xnp.sqrt(xnp.where(small, 1, n2))
        # sin(angle / 2) / angle and cos(angle / 2), by their series near 0
        scale = xnp.where(small, 0.5 - n2 / 48 + n2 * n2 / 3840, xnp.sin(angle / 2) / angle)
        scalar = xnp.where(small, 1 - n2 / 8 + n2 * n2 / 384, xnp.cos(angle / 2))
        return cls(_quat(r * scale[..., None], scalar))

    @classmethod
    def identity(cls, num: int | None = None, dtype: Any = float) -> Rotation:
        """The identity rotation (``num`` of them, if given)."""
        q = xnp.array([0.0, 0.0, 0.0, 1.0], dtype=dtype)
        return cls(q if num is None else xnp.tile(q, (num, 1)))

    @classmethod
    def random(cls, random_key: Any, num: int | None = None) -> Rotation:
        """Rotations drawn uniformly (normalised Gaussian quaternions).  JAX
        itself leaves this unimplemented."""
        from numxla import random
        shape = (4,) if num is None else (num, 4)
        return cls.from_quat(random.normal(random_key, shape))

    # -- sequences of rotations -------------------------------------------------------------------

    @property
    def single(self) -> bool:
        """Whether this is one rotation (not a sequence of them)."""
        return self.quat.ndim == 1

    def __len__(self) -> int:
        if self.single:
            raise TypeError("Single rotation has no len().")
        return self.quat.shape[0]

    def __getitem__(self, indexer: Any) -> Rotation:
        if self.single:
            raise TypeError("Single rotation is not subscriptable.")
        return Rotation(self.quat[indexer])

    def __mul__(self, other: Rotation) -> Rotation:
        """The composition: ``other`` applied first, then this rotation."""
        if not hasattr(other, "quat"):   # duck-typed: numxla standing in for jax may load
            return NotImplemented          # this module twice, under both names
        return Rotation(_multiply(self.quat, other.quat))

    def inv(self) -> Rotation:
        """The inverse rotations."""
        return Rotation(self.quat * xnp.array([-1, -1, -1, 1], dtype=self.quat.dtype))

    # -- conversions ------------------------------------------------------------------------------

    def as_quat(self, canonical: bool = False, scalar_first: bool = False) -> Any:
        """The quaternions; ``canonical`` picks the sign with ``w > 0`` (or, for
        ``w == 0``, the first nonzero of x, y, z positive)."""
        q = self.quat
        if canonical:
            flip = q[..., 3] < 0
            undecided = q[..., 3] == 0
            for n in range(3):
                flip = flip | (undecided & (q[..., n] < 0))
                undecided = undecided & (q[..., n] == 0)
            q = xnp.where(flip[..., None], -q, q)
        return xnp.roll(q, 1, axis=-1) if scalar_first else q

    def as_matrix(self) -> Any:
        """The rotation matrices (..., 3, 3)."""
        x, y, z, w = (self.quat[..., n] for n in range(4))
        rows = [[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]]
        return xnp.stack([xnp.stack(row, axis=-1) for row in rows], axis=-2)

    def as_mrp(self) -> Any:
        """The modified Rodrigues parameters (..., 3), of the angle at most pi."""
        q = _canonical(self.quat)
        return q[..., :3] / (1 + q[..., 3:])

    def as_rotvec(self, degrees: bool = False) -> Any:
        """The rotation vectors (..., 3): axis times angle (at most pi)."""
        q = _canonical(self.quat)
        v, w = q[..., :3], q[..., 3]
        s2 = _norm2(v)
        s = xnp.sqrt(xnp.where(s2 > 0, s2, 1))
        angle = 2 * xnp.arctan2(xnp.where(s2 > 0, s, 0), w)
        small = angle < _SMALL_ANGLE
        safe_angle = xnp.where(small, 1, angle)
        # angle / sin(angle / 2), by its series near 0
        scale = xnp.where(small, 2 + angle * angle / 12 + 7 * angle ** 4 / 2880,
                          safe_angle / xnp.sin(safe_angle / 2))
        rotvec = v * scale[..., None]
        return xnp.rad2deg(rotvec) if degrees else rotvec

    def as_euler(self, seq: str, degrees: bool = False) -> Any:
        """The Euler angles (..., 3) of ``seq`` (see :meth:`from_euler`): the
        first and last in [-pi, pi], the middle in [0, pi] (repeated first
        axis) or [-pi/2, pi/2]."""
        angles = _euler_from_quat(self.quat, seq)
        return xnp.rad2deg(angles) if degrees else angles

    # -- actions ----------------------------------------------------------------------------------

    def apply(self, vectors: Any, inverse: bool = False) -> Any:
        """The ``vectors`` (..., 3) rotated (by the inverse rotations if
        ``inverse``); rotations and vectors broadcast against each other."""
        (v,) = promote_inexact(vectors)
        if v.ndim < 1 or v.shape[-1] != 3:
            raise ValueError(f"Rotation.apply: vectors must have shape (..., 3), "
                             f"got {tuple(v.shape)}")
        try:
            np.broadcast_shapes(self.quat.shape[:-1], v.shape[:-1])
        except ValueError:
            raise ValueError(f"Rotation.apply: {self.quat.shape[:-1]} rotations do not "
                             f"broadcast with vectors of shape {tuple(v.shape)}") from None
        m = self.as_matrix()
        if inverse:
            m = xnp.swapaxes(m, -1, -2)
        return xnp.matmul(m, v[..., None])[..., 0]

    def magnitude(self) -> Any:
        """The rotation angles, in [0, pi]."""
        q = self.quat
        return 2 * xnp.arctan2(xnp.linalg.norm(q[..., :3], axis=-1), xnp.abs(q[..., 3]))

    def mean(self, weights: Any = None) -> Rotation:
        """The (weighted) mean rotation: the eigenvector of the largest
        eigenvalue of ``sum_n w_n q_n q_n^T``."""
        q = xnp.atleast_2d(self.quat)
        if weights is None:
            weights = xnp.ones(q.shape[:1], dtype=q.dtype)
        weights, q = promote_inexact(weights, q)
        if weights.shape != q.shape[:1]:
            raise ValueError(f"Rotation.mean: weights must have shape {tuple(q.shape[:1])}, "
                             f"got {tuple(weights.shape)}")
        k = xnp.einsum("n,ni,nj->ij", weights, q, q)
        _, vectors = xnp.linalg.eigh(k)
        return Rotation(vectors[:, -1])


class Slerp(NamedTuple):
    """Spherical linear interpolation of rotations at increasing ``times``
    (constant angular velocity between them).  Build with :meth:`init`."""

    times: Any
    timedelta: Any
    rotations: Rotation
    rotvecs: Any

    @classmethod
    def init(cls, times: Any, rotations: Rotation) -> Slerp:
        """The interpolator of ``rotations`` (at least 2) at ``times`` (1-D)."""
        if not hasattr(rotations, "quat"):
            raise TypeError(f"Slerp.init: rotations must be a Rotation, "
                            f"got {type(rotations).__name__}")
        if rotations.single or len(rotations) < 2:
            raise ValueError("Slerp.init: rotations must hold at least 2 rotations")
        (times,) = promote_inexact(times)
        if times.ndim != 1 or times.shape[0] != len(rotations):
            raise ValueError(f"Slerp.init: times must be 1-D with one entry per rotation "
                             f"({len(rotations)}), got shape {tuple(times.shape)}")
        steps = rotations[:-1].inv() * rotations[1:]
        return cls(times, xnp.diff(times), rotations, steps.as_rotvec())

    def __call__(self, times: Any) -> Rotation:
        """The interpolated rotations at ``times`` (a scalar gives one rotation).
        Times outside the range extrapolate as JAX's do: before the first,
        the first interval's motion continues backwards; after the last, the
        last interval's motion restarts from its first rotation, timed from
        the last time."""
        (t,) = promote_inexact(times)
        count = self.times.shape[0]
        after = xnp.maximum(xnp.searchsorted(self.times, t) - 1, 0)   # the time t follows
        interval = xnp.minimum(after, count - 2)
        fraction = (t - self.times[after]) / self.timedelta[interval]
        step = Rotation.from_rotvec(self.rotvecs[interval] * fraction[..., None])
        return Rotation(self.rotations.quat[interval]) * step
