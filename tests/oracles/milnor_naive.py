"""The obvious twin of the compiled product: Milnor's matrix formula, one product at a time, in Python.

Every matrix X with weighted row sums R and column sums S is listed by brute force and its
coefficient, the product of the anti-diagonal multinomials, is computed with exact integers and
reduced mod 2. Slow, short, and easy to check by eye; the fast kernels are tested against it.
"""
from __future__ import annotations

import itertools
from math import factorial
from typing import Iterator


def _row_choices(r: int, k: int, s: tuple[int, ...]) -> Iterator[tuple[int, ...]]:
    """(x_1, ..., x_k) with sum_j 2^j x_j <= r and x_j <= s_j."""
    def rec(j: int, left: int) -> Iterator[tuple[int, ...]]:
        if j > k:
            yield ()
            return
        for v in range(min(s[j - 1], left >> j) + 1):
            for rest in rec(j + 1, left - (v << j)):
                yield (v,) + rest
    return rec(1, r)


def _multinomial(parts: list[int]) -> int:
    out = factorial(sum(parts))
    for p in parts:
        out //= factorial(p)
    return out


def multiply_naive(r: tuple[int, ...], s: tuple[int, ...]) -> set[tuple[int, ...]]:
    """P(R) * P(S) mod 2 as the set of T with odd coefficient (trailing zeros stripped)."""
    m, k = len(r), len(s)
    result: dict[tuple[int, ...], int] = {}
    rows = [list(_row_choices(r[i], k, s)) for i in range(m)]
    for choice in itertools.product(*rows):
        x = [[0] * (k + 1) for _ in range(m + 1)]
        ok = True
        for i in range(1, m + 1):
            x[i][1:] = choice[i - 1]
            x[i][0] = r[i - 1] - sum(v << j for j, v in enumerate(choice[i - 1], start=1))
        for j in range(1, k + 1):
            x[0][j] = s[j - 1] - sum(x[i][j] for i in range(1, m + 1))
            ok &= x[0][j] >= 0
        if not ok:
            continue
        t = []
        coeff = 1
        for n in range(1, m + k + 1):
            diag = [x[i][n - i] for i in range(max(0, n - k), min(m, n) + 1)]
            t.append(sum(diag))
            coeff *= _multinomial(diag)
        if coeff % 2:
            while t and t[-1] == 0:
                t.pop()
            key = tuple(t)
            result[key] = result.get(key, 0) ^ 1
    return {t for t, c in result.items() if c}
