"""SPMD: ``pmap`` (``pmap.py``) runs one compiled program on several
processes — threads, or MPI ranks (``mpi.py``) of one or several replicas
each (``hybrid.py``), whose dead are reported (``faults.py``) — whose
collectives meet at a rendezvous (``rendezvous.py``).  Imported by name,
not here: the rendezvous is what compiled collectives call, and must not
import ``jit``."""
