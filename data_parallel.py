"""Data-parallel training of the README's CNN: each replica trains on its
own shard of every batch (generated from its own seed: under MPI a rank
makes, holds and passes only its own replicas' shards, seeds
``1000 + r*L .. 1000 + r*L + L-1``), gradients averaged by one AllReduce per
step (``pmean`` of all of them and the loss packed in one buffer), the same
SGD step on every replica, so the parameters stay bit-identical.

    python data_parallel.py                          # 2 replicas on threads
    mpiexec -n 2 python -m mpi4py data_parallel.py --mpi   # 2 ranks, 1 replica each
    NUMXLA_DEVICE_COUNT=2 mpiexec -n 2 python -m mpi4py data_parallel.py --mpi  # 2 x 2

Batch normalisation is synchronised: its mean and variance are averaged over
the replicas (``pmean`` of the per-replica moments, one AllReduce), so the replicated model
computes exactly what one replica computes on the whole batch.  ``--check``
(on by default; ``--no-check`` for timing) trains one replica on the whole
batch afterwards (under MPI rank 0, from the shards the ranks made) and
compares; the ranks compare hashes of their parameters.
"""
from __future__ import annotations

import argparse
import functools
import hashlib
import time
from typing import Any

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
    if axis_name is not None:  # both in one AllReduce
        mean, mean_sq = lax.pmean((mean, mean_sq), axis_name)
    return (y - mean) * lax.rsqrt(mean_sq - mean * mean + epsilon) * scale + offset


def loss(params, x, labels, axis_name=None):
    """The README's CNN and loss, with batch norm synchronised over ``axis_name``."""
    norm = functools.partial(sync_batch_norm, axis_name=axis_name)
    return nll(cnn_logits(params, x, norm), labels)


def _all_reduce_once(grads: Any, axis_name: str) -> Any:
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
        value, grads = _all_reduce_once((value, grads), AXIS)   # the loss rides along
        new = pytree.tree_map(lambda p, g: p - learning_rate * g, params, grads)
        return value, new
    return pmap(step, axis_name=AXIS, backend=backend)


def replica_data(replica: int, steps: int, shard: int) -> tuple[np.ndarray, np.ndarray]:
    """The images and labels of one replica for the whole run, generated
    from the replica's own seed: a rank makes only its own data."""
    return make_shapes(steps * shard, seed=1000 + replica)


def train(replicas: int = 2, steps: int = 20, batch: int = 32, learning_rate: float = 0.2,
          backend: str = "threads", verbose: bool = True, mine: range | None = None,
          check: bool = True) -> dict:
    """Train on ``replicas`` replicas (``mine``: those this MPI rank runs and
    makes data for, the others on other ranks; None: all, on threads).
    With ``check``, then one replica on the whole batch (the replicas'
    shards together).  Returns the loss curves, the largest parameter gap
    (NaN without ``check``, and on ranks other than 0), the parameters and
    the seconds per step."""
    shard = batch // replicas
    mine = range(replicas) if mine is None else mine
    data = {r: replica_data(r, steps, shard) for r in mine}   # this rank's own
    params = init_cnn(0)
    replicated = pytree.tree_map(lambda p: np.stack([p] * len(mine)), params)
    step = parallel_step(learning_rate, backend)
    curves: dict = {"parallel": [], "single": []}
    times = []
    for i in range(steps):
        part = slice(i * shard, (i + 1) * shard)
        x = np.stack([data[r][0][part] for r in mine])
        y = np.stack([data[r][1][part] for r in mine])
        start = time.perf_counter()
        value, replicated = step(replicated, x, y)
        times.append(time.perf_counter() - start)
        curves["parallel"].append(float(value[0]))
        if verbose and (i % 5 == 0 or i == steps - 1):
            print(f"  step {i:3d}  loss {value[0]:.4f} on {replicas} replicas", flush=True)
    own = pytree.tree_map(lambda p: np.asarray(p[0]), replicated)
    identical = all(np.array_equal(leaf[0], leaf[r]) for leaf in pytree.tree_leaves(replicated)
                    for r in range(len(mine)))
    world = None
    if backend == "mpi":  # the ranks compare their parameters' bytes
        from numxla.compile.spmd.mpi import mpi_world
        world = mpi_world()
        digest = hashlib.sha256(b"".join(np.ascontiguousarray(p).tobytes()
                                         for p in pytree.tree_leaves(own))).hexdigest()
        identical = identical and len(set(world.allgather(digest))) == 1
    assert identical, "replicas diverged"
    gap = float("nan")
    if check:
        if world is not None:  # rank 0 checks, with the shards every rank made
            gathered = world.gather(data, root=0)
            data = {r: d for part in gathered or [] for r, d in part.items()}
        if data.keys() == set(range(replicas)):
            curves["single"], single = single_replica(data, steps, shard, learning_rate,
                                                      verbose)
            gap = max(float(np.max(np.abs(r - s))) for r, s in
                      zip(pytree.tree_leaves(own), pytree.tree_leaves(single)))
    return {**curves, "max_param_gap": gap, "params": own, "step_seconds": times}


def single_replica(data: dict, steps: int, shard: int, learning_rate: float,
                   verbose: bool) -> tuple[list, dict]:
    """One replica trained on the whole batch (every replica's shard, in
    replica order): its loss curve and parameters."""
    params = init_cnn(0)
    single_step = jit(value_and_grad(loss))
    curve = []
    for i in range(steps):
        part = slice(i * shard, (i + 1) * shard)
        whole_x = np.concatenate([data[r][0][part] for r in sorted(data)])
        whole_y = np.concatenate([data[r][1][part] for r in sorted(data)])
        value, grads = single_step(params, whole_x, whole_y)
        params = sgd(params, grads, learning_rate)
        curve.append(float(value))
        if verbose and (i % 5 == 0 or i == steps - 1):
            print(f"  step {i:3d}  loss {float(value):.4f} on one replica", flush=True)
    return curve, params


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mpi", action="store_true",
                        help="MPI ranks of NUMXLA_DEVICE_COUNT replicas each (default 1)")
    parser.add_argument("--replicas", type=int, default=2, help="on threads")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--batch", type=int, default=32, help="the global batch of a step")
    parser.add_argument("--no-check", dest="check", action="store_false",
                        help="skip the single-replica comparison")
    args = parser.parse_args()
    replicas, rank, mine = args.replicas, 0, None
    if args.mpi:
        from numxla import local_device_count
        from numxla.compile.spmd.mpi import mpi_world
        local, rank = local_device_count(), mpi_world().rank
        replicas, mine = mpi_world().size * local, range(rank * local, (rank + 1) * local)
    result = train(replicas, args.steps, args.batch, backend="mpi" if args.mpi else "threads",
                   verbose=rank == 0, mine=mine, check=args.check)
    if rank == 0:
        later = sorted(result["step_seconds"][1:]) or result["step_seconds"]
        print(f"step time (median after the first): {later[len(later) // 2] * 1e3:.1f} ms "
              f"for a batch of {args.batch} on {replicas} replicas")
        print(f"parameters bit-identical on all {replicas} replicas" + (
            f"; largest gap to single-replica training on the whole batch: "
            f"{result['max_param_gap']:.2e}" if args.check else ""))


if __name__ == "__main__":
    main()
