"""FFT (FFT, IFFT, RFFT, IRFFT over 1-3 dims), Cholesky and TriangularSolve."""
from __future__ import annotations

__all__: list[str] = []
