"""numxla's main job (README, first command): train a small CNN with
``jit(value_and_grad(loss))`` and plain SGD on a generated data set, and
print the falling loss.

The model is the one of ``notebooks/03_training.ipynb``: conv 3x3 SAME,
``batch_norm_training``, relu, a 2x2 max ``reduce_window``, a dense layer to
the classes.  Its gradient is built from XLA's own ops: the graph printed
below holds ``batch_norm_grad`` (the VJP of ``batch_norm_training``) and
``select_and_scatter_add`` (the VJP of the max pool).
"""
from __future__ import annotations

import time

import numpy as np

from numxla import lax
from numxla import numpy as xnp
from numxla import value_and_grad
from numxla import jit
from numxla.tracer import pytree

CLASSES = ("square", "cross", "disc", "bars")


def make_shapes(n: int, size: int = 12, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``n`` noisy ``size``x``size`` grey images of four shapes (an outlined
    square, a cross, a filled disc, two vertical bars) at random places and
    sizes: NHWC float32 images and int32 labels.  Generated, no download."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, len(CLASSES), n).astype(np.int32)
    yy, xx = np.mgrid[0:size, 0:size]
    images = np.zeros((n, size, size), np.float32)
    for img, label in zip(images, labels):
        r = rng.integers(2, size // 3 + 1)
        cy, cx = rng.integers(r, size - r, 2)
        dy, dx = np.abs(yy - cy), np.abs(xx - cx)
        if label == 0:
            img[(np.maximum(dy, dx) == r)] = 1.0
        elif label == 1:
            img[((dy == 0) & (dx <= r)) | ((dx == 0) & (dy <= r))] = 1.0
        elif label == 2:
            img[dy ** 2 + dx ** 2 <= r * r] = 1.0
        else:
            img[(dy <= r) & ((dx == r) | (dx == 0))] = 1.0
    images += rng.normal(0, 0.15, images.shape).astype(np.float32)
    return images[..., None], labels


def init_cnn(seed: int = 0, size: int = 12, features: int = 8, classes: int = 4) -> dict:
    rng = np.random.default_rng(seed)
    pooled = (size // 2) ** 2 * features
    return {"conv": (rng.standard_normal((3, 3, 1, features)) / 3).astype(np.float32),
            "scale": np.ones(features, np.float32), "offset": np.zeros(features, np.float32),
            "dense": (rng.standard_normal((pooled, classes)) / (4 * np.sqrt(pooled))).astype(np.float32),
            "bias": np.zeros(classes, np.float32)}


def xla_batch_norm(y, scale, offset):
    """XLA's BatchNormTraining over N, H, W (its VJP is ``batch_norm_grad``)."""
    return lax.batch_norm_training(y, scale, offset, epsilon=1e-5, feature_index=3)[0]


def cnn_logits(params: dict, x, batch_norm=xla_batch_norm):
    """conv 3x3 SAME -> batch norm -> relu -> 2x2 max pool -> dense."""
    y = lax.conv_general_dilated(x, params["conv"], (1, 1), "SAME",
                                 dimension_numbers=("NHWC", "HWIO", "NHWC"))
    y = xnp.maximum(batch_norm(y, params["scale"], params["offset"]), 0.0)
    y = lax.reduce_window(y, -np.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    return y.reshape(y.shape[0], -1) @ params["dense"] + params["bias"]


def cross_entropy(params: dict, x, labels):
    """The mean negative log-likelihood of the labels under softmax(logits)."""
    return nll(cnn_logits(params, x), labels)


def nll(logits, labels):
    """The mean negative log-likelihood of integer ``labels`` under softmax(logits)."""
    log_probs = logits - xnp.logsumexp(logits, axis=1, keepdims=True)
    one_hot = labels[:, None] == xnp.arange(log_probs.shape[1])[None, :]
    return -xnp.sum(xnp.where(one_hot, log_probs, 0.0)) / log_probs.shape[0]


def sgd(params: dict, grads: dict, learning_rate: float) -> dict:
    return pytree.tree_map(lambda p, g: p - learning_rate * np.asarray(g), params, grads)


def train(steps: int = 60, batch: int = 32, learning_rate: float = 0.2, seed: int = 0,
          log_every: int = 10, verbose: bool = True) -> list[float]:
    """SGD on fresh batches of generated shapes; returns the loss per step."""
    images, labels = make_shapes(steps * batch, seed=seed)
    params = init_cnn(seed)
    step = jit(value_and_grad(cross_entropy))
    losses = []
    for i in range(steps):
        sl = slice(i * batch, (i + 1) * batch)
        loss, grads = step(params, images[sl], labels[sl])
        params = sgd(params, grads, learning_rate)
        losses.append(float(loss))
        if verbose and (i % log_every == 0 or i == steps - 1):
            print(f"  step {i:3d}  loss {losses[-1]:.4f}", flush=True)
    return losses


def main() -> None:
    images, labels = make_shapes(32)
    params = init_cnn()
    step = jit(value_and_grad(cross_entropy))
    text = step.lower(params, images, labels).as_text()
    print("The training step jit(value_and_grad(loss)) traces to one graph of "
          f"{text.count(chr(10))} lines; its backward pass uses XLA's own ops:")
    for op in ("batch_norm_grad", "select_and_scatter_add", "conv_general_dilated"):
        print(f"  {op:24s} x{text.count(' ' + op + '(')}")
    start = time.perf_counter()
    step(params, images, labels)
    print(f"first call (trace, then the reference semantics while Numba compiles in the "
          f"background, or the compiled code from the disk cache): "
          f"{time.perf_counter() - start:.2f} s\n")
    print("Training the CNN with plain SGD on generated shapes:")
    losses = train()
    first, last = losses[0], np.mean(losses[-5:])
    print(f"\nloss {first:.3f} -> {last:.3f} (the first step's; the mean of the last five)")
    if not last < 0.5 * first:
        raise SystemExit("the loss did not fall by half")


if __name__ == "__main__":
    main()
