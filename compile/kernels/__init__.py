"""The ``@njit`` kernels generated code calls: XLA's scalar semantics
(``scalar``), vectorisable transcendentals (``vecmath``), 16-bit floats
(``float16``), allocation (``alloc``), BLAS (``blas``), convolution
(``conv``), FFT and linear algebra (``linalg``), random bits
(``random_bits``).  Every public Numba function here is imported by each
generated module (:func:`compile.kernel.module_source`); they compile once
and are cached on disk beside these modules.  The lowering rules that write
the calls live in :mod:`compile.lowering`."""
from . import alloc, blas, conv, float16, linalg, random_bits, scalar, vecmath  # noqa: F401
