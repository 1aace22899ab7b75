"""Best-effort shrinking of a failing program (a task for the runner's pool).

Greedy passes, repeated while one helps and the budget lasts: drop outputs;
return an operand of an output's node instead of it; cut nodes into inputs
that hold their reference values, earliest first (so what remains is the op
that fails, on concrete inputs); halve inputs along a dimension (kept when
the ops still accept the smaller shape); reset layouts to the default.  A
candidate is kept when it fails the same way: a mismatch still mismatches, a
crash still crashes, a hang still hangs, an error raises the same exception
at the same place.
"""
from __future__ import annotations

from .program import Program
from .runner import Task

BUDGET = 60
HANG_BUDGET = 6   # each try of a hang costs the whole timeout


def same_failure(first: dict, again: dict) -> bool:
    if first["status"] in ("error", "rejected"):
        return again["status"] == first["status"] and again.get("key") == first.get("key")
    return again["status"] == first["status"]


def shrink(program: Program, failure: dict) -> Task:
    """Yield candidate runs; return ``(smallest failing program, its failure)``."""
    budget = HANG_BUDGET if failure["status"] == "hang" else BUDGET
    best, best_failure, tries = program, failure, 0

    def attempt(candidate: Program):
        nonlocal best, best_failure, tries
        tries += 1
        response = yield ("run", candidate)
        if same_failure(failure, response):
            best, best_failure = candidate, response
            return True
        return False

    progress = True
    while progress and tries < budget:
        progress = False
        for k in reversed(range(len(best.outputs))):
            if len(best.outputs) > 1 and tries < budget:
                progress |= yield from attempt(best.without_output(k))
        for k, name in enumerate(best.outputs):
            node = next((n for n in best.nodes if name in n.outs), None)
            for arg in (node.args if node else ()):
                if tries < budget and k < len(best.outputs) and best.outputs[k] == name:
                    progress |= yield from attempt(best.with_output(k, arg))
        response = yield ("values", best)
        values = response.get("values")
        i = 0
        while values is not None and i < len(best.nodes) and tries < budget:
            if all(o in values for o in best.nodes[i].outs) and \
                    (yield from attempt(best.cut(i, values))):
                progress = True
            else:
                i += 1
        for k in range(len(best.inputs)):
            for d in range(len(best.inputs[k].shape) if k < len(best.inputs) else 0):
                for upper in (False, True):
                    if best.inputs[k].shape[d] > 1 and tries < budget:
                        progress |= yield from attempt(best.halved(k, d, upper))
        for k, inp in enumerate(best.inputs):
            if inp.layout is not None and tries < budget:
                candidate = best.copy()
                candidate.inputs[k] = type(inp)(inp.name, inp.type, inp.shape, inp.value)
                progress |= yield from attempt(candidate)
        for k, layout in enumerate(best.out_layouts):
            if layout is not None and tries < budget:
                candidate = best.copy()
                candidate.out_layouts[k] = None
                progress |= yield from attempt(candidate)
    return best, best_failure
