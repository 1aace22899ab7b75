"""numxla's fuzzer: seeded random XLA programs, compiled with ``jit`` in worker
subprocesses and compared with the reference semantics.  See ``README.md``
and ``python -m tests.fuzz --help``."""
