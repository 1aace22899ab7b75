"""Every primitive has its transformation rules: a batching rule, and either
both a JVP and a VJP rule or a place among the ops with no derivative."""
from __future__ import annotations

import numxla.autodiff  # noqa: F401  (registers every family's rules)
import numxla.primitives as lax
from numxla.autodiff.rules import batch_rules, jvp_rules, non_differentiable, vjp_rules
from numxla.tracer.core import PRIMITIVES


# iota takes no operands, so nothing it is given can be batched: vmap never
# calls a batching rule for it.
NO_OPERANDS = {"iota"}


def _missing() -> dict[str, list[str]]:
    missing: dict[str, list[str]] = {}
    for name in lax.list_primitives():
        prim = PRIMITIVES[name]
        lacks = []
        if prim not in batch_rules and name not in NO_OPERANDS:
            lacks.append("batch")
        if prim not in non_differentiable:
            lacks += [kind for kind, table in (("jvp", jvp_rules), ("vjp", vjp_rules))
                      if prim not in table]
        if lacks:
            missing[name] = lacks
    return missing


def test_every_primitive_has_its_rules():
    missing = _missing()
    assert not missing, (f"{len(missing)} primitive(s) lack rules:\n" +
                         "\n".join(f"  {name}: no {', '.join(kinds)}"
                                   for name, kinds in sorted(missing.items())))


def test_non_differentiable_ops_have_no_derivative_rules():
    # a rule for an op marked non-differentiable would never run: a mistake
    both = sorted(p.name for p in non_differentiable if p in jvp_rules or p in vjp_rules)
    assert not both, f"marked non-differentiable but with derivative rules: {both}"
