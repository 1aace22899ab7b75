"""Data-parallel training of the README's CNN: the batch split across
replicas, gradients averaged by AllReduce (``pmean``), the same SGD step on
every replica, so the parameters stay bit-identical.

    python data_parallel.py                       # 2 replicas on threads
    mpiexec -n 2 python data_parallel.py --mpi    # 2 MPI ranks, one replica each

Batch normalisation is synchronised: its mean and variance are averaged over
the replicas (``pmean`` of the per-replica moments), so the replicated model
computes exactly what one replica computes on the whole batch; the script
checks that against single-replica training and prints both losses.
"""
from __future__ import annotations

import argparse
import functools

import numpy as np

import primitives as lax
import primitives.numpy as xnp
from autodiff import value_and_grad
from compile import jit, pmap
from demo import cnn_logits, init_cnn, make_shapes, nll, sgd
from tracer import pytree

AXIS = "batch"


def sync_batch_norm(y, scale, offset, axis_name=None, epsilon=1e-5):
    """Training-mode batch norm over N, H, W; with ``axis_name`` its moments
    are averaged over the replicas (synchronised batch norm)."""
    mean = xnp.mean(y, axis=(0, 1, 2))
    mean_sq = xnp.mean(y * y, axis=(0, 1, 2))
    if axis_name is not None:
        mean, mean_sq = lax.pmean(mean, axis_name), lax.pmean(mean_sq, axis_name)
    return (y - mean) * lax.rsqrt(mean_sq - mean * mean + epsilon) * scale + offset


def loss(params, x, labels, axis_name=None):
    """The README's CNN and loss, with batch norm synchronised over ``axis_name``."""
    norm = functools.partial(sync_batch_norm, axis_name=axis_name)
    return nll(cnn_logits(params, x, norm), labels)


def parallel_step(learning_rate: float, backend: str = "threads"):
    """One replicated SGD step: (params, x shard, labels shard) -> (loss, params)."""
    def step(params, x, labels):
        value, grads = value_and_grad(loss)(params, x, labels, AXIS)
        grads = lax.pmean(grads, AXIS)
        new = pytree.tree_map(lambda p, g: p - learning_rate * g, params, grads)
        return lax.pmean(value, AXIS), new
    # (MPI: every rank still passes the whole batch and gets every replica's
    # parameters back; per-rank data is issue 15's next step)
    return pmap(step, axis_name=AXIS, backend=backend, global_arguments=backend == "mpi")


def train(replicas: int = 2, steps: int = 20, batch: int = 32, learning_rate: float = 0.2,
          backend: str = "threads", verbose: bool = True) -> dict:
    """Train on ``replicas`` replicas and, alongside, on one replica with the
    whole batch; returns both loss curves and the largest parameter gap."""
    images, labels = make_shapes(steps * batch, seed=0)
    params = init_cnn(0)
    replicated = pytree.tree_map(lambda p: np.stack([p] * replicas), params)
    single = params
    step = parallel_step(learning_rate, backend)
    single_step = jit(value_and_grad(loss))
    curves: dict = {"parallel": [], "single": []}
    for i in range(steps):
        x, y = images[i * batch:(i + 1) * batch], labels[i * batch:(i + 1) * batch]
        shard = batch // replicas
        value, replicated = step(replicated, x.reshape(replicas, shard, *x.shape[1:]),
                                 y.reshape(replicas, shard))
        single_value, grads = single_step(single, x, y)
        single = sgd(single, grads, learning_rate)
        curves["parallel"].append(float(value[0]))
        curves["single"].append(float(single_value))
        if verbose and (i % 5 == 0 or i == steps - 1):
            print(f"  step {i:3d}  loss {value[0]:.4f} on {replicas} replicas, "
                  f"{float(single_value):.4f} on one", flush=True)
    for leaf in pytree.tree_leaves(replicated):
        assert all(np.array_equal(leaf[0], leaf[r]) for r in range(replicas)), \
            "replicas diverged"
    gap = max(float(np.max(np.abs(r[0] - s))) for r, s in
              zip(pytree.tree_leaves(replicated), pytree.tree_leaves(single)))
    return {**curves, "max_param_gap": gap, "params": pytree.tree_map(lambda p: p[0], replicated)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mpi", action="store_true", help="one replica per MPI rank")
    parser.add_argument("--replicas", type=int, default=2)
    parser.add_argument("--steps", type=int, default=20)
    args = parser.parse_args()
    replicas, rank = args.replicas, 0
    if args.mpi:
        from compile.spmd.mpi import mpi_world
        replicas, rank = mpi_world().size, mpi_world().rank
    result = train(replicas, args.steps, backend="mpi" if args.mpi else "threads",
                   verbose=rank == 0)
    if rank == 0:
        print(f"parameters bit-identical on all {replicas} replicas; largest gap to "
              f"single-replica training on the whole batch: {result['max_param_gap']:.2e}")


if __name__ == "__main__":
    main()
