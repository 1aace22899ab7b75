"""Data-parallel training of the README's CNN: each replica trains on its
own shard of every batch (generated from its own seed; under MPI a rank
makes and passes only its own), gradients averaged by one AllReduce per
step (``pmean`` of all of them packed in one buffer), the same SGD step on
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
import hashlib

import numpy as np

from numxla import lax
from numxla import numpy as xnp
from numxla import value_and_grad
from numxla import jit, pmap
from demo import cnn_logits, init_cnn, make_shapes, nll, sgd
from numxla.tracer import pytree

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


def _all_reduce_once(grads: dict, axis_name: str) -> dict:
    """The mean of ``grads`` over the replicas in one AllReduce: every leaf
    flattened into one buffer, averaged, and split back (one message per
    step instead of one per parameter)."""
    leaves, tree = pytree.flatten(grads)
    flat = lax.pmean(xnp.concatenate([xnp.ravel(g) for g in leaves]), axis_name)
    out, start = [], 0
    for g in leaves:
        out.append(xnp.reshape(flat[start:start + g.size], g.shape))
        start += g.size
    return tree.unflatten(out)


def parallel_step(learning_rate: float, backend: str = "threads"):
    """One replicated SGD step: (params, x shard, labels shard) -> (loss,
    params); under MPI each rank passes its own shard and replica."""
    def step(params, x, labels):
        value, grads = value_and_grad(loss)(params, x, labels, AXIS)
        grads = _all_reduce_once(grads, AXIS)
        new = pytree.tree_map(lambda p, g: p - learning_rate * g, params, grads)
        return lax.pmean(value, AXIS), new
    return pmap(step, axis_name=AXIS, backend=backend)


def replica_data(replica: int, steps: int, shard: int) -> tuple[np.ndarray, np.ndarray]:
    """The images and labels of one replica for the whole run, generated
    from the replica's own seed: a rank makes only its own data."""
    return make_shapes(steps * shard, seed=1000 + replica)


def train(replicas: int = 2, steps: int = 20, batch: int = 32, learning_rate: float = 0.2,
          backend: str = "threads", verbose: bool = True, rank: int | None = None) -> dict:
    """Train on ``replicas`` replicas (``rank``: this MPI rank's, the others
    on other ranks) and, alongside, on one replica with the whole batch (the
    replicas' shards together); returns both loss curves, the largest
    parameter gap and whether the replicas stayed bit-identical."""
    shard = batch // replicas
    mine = range(replicas) if rank is None else [rank]
    data = {r: replica_data(r, steps, shard) for r in range(replicas)}  # (the check needs all)
    params = init_cnn(0)
    replicated = pytree.tree_map(lambda p: np.stack([p] * len(mine)), params)
    single = params
    step = parallel_step(learning_rate, backend)
    single_step = jit(value_and_grad(loss))
    curves: dict = {"parallel": [], "single": []}
    for i in range(steps):
        part = slice(i * shard, (i + 1) * shard)
        x = np.stack([data[r][0][part] for r in mine])
        y = np.stack([data[r][1][part] for r in mine])
        value, replicated = step(replicated, x, y)
        whole_x = np.concatenate([data[r][0][part] for r in range(replicas)])
        whole_y = np.concatenate([data[r][1][part] for r in range(replicas)])
        single_value, grads = single_step(single, whole_x, whole_y)
        single = sgd(single, grads, learning_rate)
        curves["parallel"].append(float(value[0]))
        curves["single"].append(float(single_value))
        if verbose and (i % 5 == 0 or i == steps - 1):
            print(f"  step {i:3d}  loss {value[0]:.4f} on {replicas} replicas, "
                  f"{float(single_value):.4f} on one", flush=True)
    own = pytree.tree_map(lambda p: np.asarray(p[0]), replicated)
    identical = all(np.array_equal(leaf[0], leaf[r]) for leaf in pytree.tree_leaves(replicated)
                    for r in range(len(mine)))
    if rank is not None:  # the ranks compare their parameters' bytes
        from numxla.compile.spmd.mpi import mpi_world
        digest = hashlib.sha256(b"".join(np.ascontiguousarray(p).tobytes()
                                         for p in pytree.tree_leaves(own))).hexdigest()
        identical = identical and len(set(mpi_world().allgather(digest))) == 1
    assert identical, "replicas diverged"
    gap = max(float(np.max(np.abs(r - s))) for r, s in
              zip(pytree.tree_leaves(own), pytree.tree_leaves(single)))
    return {**curves, "max_param_gap": gap, "params": own}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mpi", action="store_true", help="one replica per MPI rank")
    parser.add_argument("--replicas", type=int, default=2)
    parser.add_argument("--steps", type=int, default=20)
    args = parser.parse_args()
    replicas, rank = args.replicas, 0
    if args.mpi:
        from numxla.compile.spmd.mpi import mpi_world
        replicas, rank = mpi_world().size, mpi_world().rank
    result = train(replicas, args.steps, backend="mpi" if args.mpi else "threads",
                   verbose=rank == 0, rank=rank if args.mpi else None)
    if rank == 0:
        print(f"parameters bit-identical on all {replicas} replicas; largest gap to "
              f"single-replica training on the whole batch: {result['max_param_gap']:.2e}")


if __name__ == "__main__":
    main()
