"""Collectives: AllReduce, AllGather, AllToAll, ReduceScatter, CollectivePermute, CrossReplicaSum, ReplicaId — shape rules and reference semantics over per-replica values."""
from __future__ import annotations

__all__: list[str] = []
