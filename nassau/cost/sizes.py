"""The sizes a run's cost is made of that are known exactly before it runs: dim A_n of the algebra the resolution is
over, by its generating function (no basis built: stem 1000 asks for degrees whose bases would not fit in memory),
and the dimensions of free modules with given generators.

A_n's Milnor basis is the monomials in the xi_i (degree 2^i - 1 at p = 2, 2(p^i - 1) at odd p), with exponents
below p^{h_i} by the profile, times at odd p the exterior tau_i (degree 2p^i - 1) the profile keeps.
"""
from __future__ import annotations

import numpy as np

from algebra.milnor.profile import UNBOUNDED, Profile


def algebra_dims(prime: int, profile: Profile, top: int) -> np.ndarray:
    """dim A_n for n = 0..top (float64: exact below 2^53, and far beyond what any run holds)."""
    dims = np.zeros(top + 1)
    dims[0] = 1.0
    i = 1
    while True:
        degree = (1 << i) - 1 if prime == 2 else 2 * (prime ** i - 1)
        if degree > top:
            break
        h = profile.h(i - 1)
        if h > 0:
            dims = _times_geometric(dims, degree, None if h >= UNBOUNDED else prime ** h)
        i += 1
    if prime != 2:
        k = 0
        while 2 * prime ** k - 1 <= top:
            if profile.q_part == -1 or profile.q_part >> k & 1:
                degree = 2 * prime ** k - 1
                dims[degree:] = dims[degree:] + dims[:-degree].copy()
            k += 1
    return dims


def _times_geometric(dims: np.ndarray, degree: int, count: int | None) -> np.ndarray:
    """dims times 1 + x^d + ... + x^{(count-1) d} (count None: the whole series 1 / (1 - x^d))."""
    out = dims.copy()
    for n in range(degree, len(out)):  # times 1 / (1 - x^d)
        out[n] += out[n - degree]
    if count is not None and count * degree < len(out):  # times (1 - x^{count d})
        cut = count * degree
        out[cut:] = out[cut:] - out[:-cut].copy()
    return out


def free_dims(generators: np.ndarray, dims: np.ndarray) -> np.ndarray:
    """dim F(t) for t = 0..len(generators) - 1 of a free module with generators[d] generators in degree d (degrees
    counted from the module's bottom): the convolution with dim A."""
    return np.convolve(generators, dims[:len(generators)])[:len(generators)]
