"""A fuzzing campaign: generate programs for a range of seeds, run them in the
pool, shrink the failures, write repro scripts and summarise."""
from __future__ import annotations

import dataclasses
import json
import os
import sys
import time
from collections import Counter

from .generator import generate
from .runner import Pool, single
from .shrink import shrink

FAILURES = ("mismatch", "crash", "hang", "error")
LABELS = {"pass": "passed", "mismatch": "mismatches", "crash": "crashes", "hang": "hangs",
          "rejected": "expected rejections", "error": "unexpected exceptions"}


@dataclasses.dataclass
class Outcome:
    seed: int
    status: str
    detail: str
    key: str
    phase: str = ""
    where: str = ""
    seconds: float | None = None
    program: object = None
    shrunk: object = None
    shrunk_failure: dict | None = None
    repro: str | None = None

    def signature(self) -> str:
        """What distinct failures are told apart by: an exception's type and
        place; else the status, the result type and the ops of the shrunk program."""
        if self.status == "error":
            return f"error | {self.key}"
        program = self.shrunk or self.program
        ops = sorted(set(program.ops())) if program is not None else []
        failure = self.shrunk_failure or {"key": self.key}
        return f"{self.status} | {failure.get('key', self.key)} | {' '.join(ops)}"


def _tasks(seeds, exclude, only, avoid, outcomes):
    for seed in seeds:
        try:
            program = generate(seed, exclude=exclude, only=only, avoid=avoid)
        except Exception as e:  # noqa: BLE001 - a generator bug is a result of its own
            outcomes[seed] = Outcome(seed, "error", f"generator: {e!r}", "generator")
            continue
        outcomes[seed] = Outcome(seed, "?", "", "", program=program)
        yield seed, single(program)


def run_campaign(seeds, *, jobs: int = 2, timeout: float = 60.0, out: str | None = None,
                 exclude=(), only=(), avoid=(), max_shrink: int = 40, log=sys.stderr
                 ) -> list[Outcome]:
    """Run the programs of ``seeds``; shrink up to ``max_shrink`` failures
    (one per distinct failure first); write repros into ``out``."""
    outcomes: dict[int, Outcome] = {}
    start = time.monotonic()
    seeds = list(seeds)
    with Pool(jobs, timeout) as pool:
        for done, (seed, response) in enumerate(pool.drive(_tasks(seeds, exclude, only, avoid,
                                                                  outcomes)), 1):
            o = outcomes[seed]
            o.status, o.detail, o.key = response["status"], response.get("detail", ""), \
                response.get("key", "")
            o.phase, o.where, o.seconds = response.get("phase", ""), \
                response.get("where", ""), response.get("seconds")
            if o.status in FAILURES and log:
                print(f"seed {seed}: {o.status}: {o.detail.splitlines()[0][:200]}", file=log)
            if log and done % 50 == 0:
                print(f"... {done}/{len(seeds)} programs, {time.monotonic() - start:.0f} s",
                      file=log)
        # a hang may be a loaded machine: once more, with twice the time
        hangs = [o for o in outcomes.values() if o.status == "hang"]
        pool.timeout = 2 * timeout
        for seed, response in pool.drive((o.seed, single(o.program)) for o in hangs):
            if response["status"] != "hang":
                o = outcomes[seed]
                o.status, o.key, o.phase = response["status"], response.get("key", ""), \
                    response.get("phase", "")
                o.detail = f"{response.get('detail', '')} (no result within {timeout:g} s " \
                           f"the first time)".strip()
        pool.timeout = timeout
        failing = [o for o in outcomes.values() if o.status in FAILURES and o.program]
        firsts: dict[str, Outcome] = {}
        for o in failing:
            firsts.setdefault(o.key, o)
        # one program per place an exception comes from; mismatches, crashes and
        # hangs, whose keys tell less apart, as many as the budget allows
        rest = [o for o in failing if o.status != "error" and o not in firsts.values()]
        to_shrink = (list(firsts.values()) + rest)[:max_shrink]
        for seed, (program, failure) in pool.drive(
                (o.seed, shrink(o.program, {"status": o.status, "key": o.key}))
                for o in to_shrink):
            o = outcomes[seed]
            o.shrunk, o.shrunk_failure = program, failure
    if out:
        write_repros(outcomes.values(), out)
    return [outcomes[s] for s in seeds if s in outcomes]


def write_repros(outcomes, out: str) -> None:
    os.makedirs(out, exist_ok=True)
    for o in outcomes:
        if o.status not in FAILURES or o.program is None:
            continue
        program = o.shrunk or o.program
        failure = o.shrunk_failure or {"status": o.status, "detail": o.detail}
        comment = (f"numxla fuzz repro: seed {o.seed}, {o.status}"
                   f"{' (shrunk)' if o.shrunk else ''}\n{failure.get('detail', '')}\n"
                   f"{failure.get('where', '') or ''}")
        o.repro = os.path.join(out, f"seed{o.seed}_{o.status}.py")
        with open(o.repro, "w") as f:
            f.write(program.repro(comment[:3000]))
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump([{"seed": o.seed, "status": o.status, "detail": o.detail, "key": o.key,
                    "signature": o.signature() if o.status in FAILURES else None,
                    "repro": o.repro, "seconds": o.seconds} for o in outcomes], f, indent=1)


def summary(outcomes: list[Outcome]) -> str:
    counts = Counter(o.status for o in outcomes)
    lines = [f"programs run: {len(outcomes)}"]
    lines += [f"{LABELS[s]}: {counts.get(s, 0)}" for s in LABELS]
    distinct: dict[str, list[Outcome]] = {}
    for o in outcomes:
        if o.status in FAILURES:
            distinct.setdefault(o.signature(), []).append(o)
    if distinct:
        lines.append(f"distinct failures: {len(distinct)}")
        for sig, group in sorted(distinct.items()):
            seeds = ", ".join(str(o.seed) for o in group[:8]) + (" ..." if len(group) > 8 else "")
            first = group[0]
            detail = (first.shrunk_failure or {}).get("detail", first.detail)
            lines.append(f"  [{len(group)}] {sig}\n      seeds {seeds}\n      "
                         f"{detail.splitlines()[0][:300] if detail else ''}")
            if first.repro:
                lines.append(f"      repro: {first.repro}")
    rejections = Counter(o.detail.split(" (operands")[0][:160] for o in outcomes
                         if o.status == "rejected")
    if rejections:
        lines.append("expected rejections:")
        lines += [f"  [{n}] {msg}" for msg, n in rejections.most_common(20)]
    return "\n".join(lines)
