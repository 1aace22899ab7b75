"""``python -m tests.fuzz --count N --seed S [--jobs J] [--out DIR]``.

Runs the programs of seeds S..S+N-1, writes a repro script for each
mismatch, crash, hang and unexpected exception into DIR (shrunk, best
effort) with ``summary.json``, and prints a summary.  ``--show SEED`` prints
one program's repro script instead.  The exit status is 1 when a program failed.
"""
from __future__ import annotations

import argparse
import signal
import sys

from .campaign import FAILURES, run_campaign, summary
from .families import FAMILIES
from .generator import AVOIDABLE, generate


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.fuzz", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--count", type=int, default=100, help="programs to run")
    parser.add_argument("--seed", type=int, default=0, help="the first seed")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes (at most 2)")
    parser.add_argument("--out", default="fuzz-out", help="where repro scripts go")
    parser.add_argument("--timeout", type=float, default=60.0,
                        help="seconds a program may take before it is a hang")
    parser.add_argument("--exclude", default="", help="op families to leave out "
                        f"(comma-separated; of {', '.join(FAMILIES)})")
    parser.add_argument("--only", default="", help="op families to draw from, only")
    parser.add_argument("--avoid", default="", help="program features to leave out "
                        "(comma-separated): " + "; ".join(f"{k}: {v}" for k, v in AVOIDABLE.items()))
    parser.add_argument("--max-shrink", type=int, default=40, help="failures to shrink")
    parser.add_argument("--show", type=int, default=None, help="print this seed's program")
    args = parser.parse_args(argv)
    exclude = tuple(f for f in args.exclude.split(",") if f)
    only = tuple(f for f in args.only.split(",") if f)
    avoid = tuple(f for f in args.avoid.split(",") if f)
    for name in avoid:
        if name not in AVOIDABLE:
            parser.error(f"unknown feature {name!r} to avoid")
    for name in exclude + only:
        if name not in FAMILIES:
            parser.error(f"unknown op family {name!r}")
    if args.show is not None:
        print(generate(args.show, exclude=exclude, only=only, avoid=avoid).repro(
            f"seed {args.show}"))
        return 0
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # end the workers too
    outcomes = run_campaign(range(args.seed, args.seed + args.count), jobs=min(args.jobs, 2),
                            timeout=args.timeout, out=args.out, exclude=exclude, only=only,
                            avoid=avoid, max_shrink=args.max_shrink)
    print(f"seeds {args.seed}..{args.seed + args.count - 1}")
    print(summary(outcomes))
    return 1 if any(o.status in FAILURES for o in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main())
