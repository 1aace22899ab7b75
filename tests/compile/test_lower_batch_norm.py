"""Compiled BatchNormTraining, BatchNormInference and BatchNormGrad
(compile/lowering/batch_norm.py) against their reference semantics: every
feature_index (negative ones too), f32, f64 and the 16-bit floats, operands
and results in non-default layouts, and the CNN benchmark's shape.

Numba compiles slowly, so each test jits one function holding many checks."""
from __future__ import annotations

import functools

import numpy as np

import numxla.compile.lowering.batch_norm  # noqa: F401  (registers the lowerings)
import numxla.primitives as lax
from numxla.compile import jit
from numxla.tracer.core import bf16_array
from numxla.tracer.shapes import Layout

from . import util
from .util import column_major, padded, relaid, repeated_tiles, tiled

rng = np.random.default_rng(3)
TOLS = {"bf16": 2e-2, "f16": 3e-3, "f32": 1e-5, "f64": 1e-12}
check_all = functools.partial(util.check_all, tols=TOLS)
LAYOUTS = [column_major, tiled, lambda av: Layout(tuple(range(1, av.ndim)) + (0,)),  # rotated
           padded(1), repeated_tiles]  # for relaid


def vec(n, dtype, positive=False):
    v = rng.standard_normal(n)
    return (np.abs(v) + 0.5 if positive else v).astype(dtype)


def batch_norms(x, dy, s, o, m, v, x64, dy64, s64, o64, m64, v64, h, hs, ho):
    return [lax.batch_norm_training(x, s, o, 1e-3, 1),
            lax.batch_norm_training(x64, s64, o64, 1e-5, -1),
            lax.batch_norm_training(h, hs, ho, 1e-3, 0),
            lax.batch_norm_inference(x, s, o, m, v, 1e-3, 1),
            lax.batch_norm_inference(x64, s64, o64, m64, v64, 0.5, 3),
            lax.batch_norm_grad(x, s, m, v, dy, 1e-3, 1),
            lax.batch_norm_grad(x64, s64, m64, v64, dy64, 1e-4, -1)]


def bn_args():
    x = rng.standard_normal((4, 5, 6, 3)).astype(np.float32) * 3 + 1
    x64 = rng.standard_normal((2, 3, 4, 7))
    h = rng.standard_normal((4, 6)).astype(np.float16)
    return (x, rng.standard_normal(x.shape).astype(np.float32), vec(5, np.float32),
            vec(5, np.float32), vec(5, np.float32), vec(5, np.float32, True),
            x64, rng.standard_normal(x64.shape), vec(7, np.float64), vec(7, np.float64),
            vec(7, np.float64), vec(7, np.float64, True),
            h, vec(4, np.float16), vec(4, np.float16))


def test_batch_norm_ops():
    args = bn_args()
    check_all(jit(batch_norms)(*args), batch_norms(*args))


def test_batch_norm_layouts():
    args = bn_args()[:6]

    def f(x, dy, s, o, m, v):
        return [lax.batch_norm_training(x, s, o, 1e-3, 1),
                lax.batch_norm_inference(x, s, o, m, v, 1e-3, 1),
                lax.batch_norm_grad(x, s, m, v, dy, 1e-3, 1)]
    check_all(relaid(f, args, layouts=LAYOUTS)(*args), f(*args))
    nchw = jit(f, in_layouts=("{1,0,3,2}", "{0,1,2,3}", None, None, None, None))
    check_all(nchw(*args), f(*args))


def test_batch_norm_bf16():
    x = bf16_array(rng.standard_normal((3, 4)).astype(np.float32))
    s, o = bf16_array(vec(4, np.float32)), bf16_array(vec(4, np.float32))

    def f(x, s, o):
        return lax.batch_norm_training(x, s, o, 1e-3, 1)
    check_all(jit(f)(x, s, o), f(x, s, o))


def test_batch_norm_cnn_shape():
    """The CNN benchmark's batch norm: NHWC 32x32x32x32 f32 over the channels."""
    x = rng.standard_normal((32, 32, 32, 32)).astype(np.float32)
    s, o = vec(32, np.float32), vec(32, np.float32)

    def f(x, s, o):
        return lax.batch_norm_training(x, s, o, 1e-5, 3)
    check_all(jit(f)(x, s, o), f(x, s, o))
