"""The obvious twin of the odd-prime product: Milnor's formulas in Python, exact integers, one product at a time.

Stage A applies P(R) Q_k = Q_k P(R) + sum_i Q_{k+i} P(R - p^k e_i) and sorts the Q's with signs; stage B lists every
matrix with weighted rows R and columns S by brute force and multiplies the anti-diagonal multinomials exactly
before reducing mod p. Slow and independent of the compiled kernel's odometer, Lucas digits and lookups.
"""
from __future__ import annotations

import itertools
from math import factorial

Element = tuple[int, tuple[int, ...]]


def _strip(r: list[int] | tuple[int, ...]) -> tuple[int, ...]:
    r = list(r)
    while r and r[-1] == 0:
        r.pop()
    return tuple(r)


def _q_times(p: int, coef: int, e: int, m: int) -> tuple[int, int] | None:
    """Q(E) Q_m as (sign-adjusted coefficient, new mask), None if Q_m is already there."""
    if e >> m & 1:
        return None
    above = bin(e >> (m + 1)).count("1")
    return (coef * (-1) ** above) % p, e | 1 << m


def _p_times_p(p: int, r: tuple[int, ...], s: tuple[int, ...]) -> dict[tuple[int, ...], int]:
    m, n = len(r), len(s)
    out: dict[tuple[int, ...], int] = {}
    cells = [(i, j) for i in range(1, m + 1) for j in range(1, n + 1)]
    ranges = [range(min(r[i - 1] // p**j, s[j - 1]) + 1) for i, j in cells]
    for values in itertools.product(*ranges):
        x = {c: v for c, v in zip(cells, values, strict=True)}
        rows = [r[i - 1] - sum(p**j * x[(i, j)] for j in range(1, n + 1)) for i in range(1, m + 1)]
        cols = [s[j - 1] - sum(x[(i, j)] for i in range(1, m + 1)) for j in range(1, n + 1)]
        if min(rows + cols, default=0) < 0:
            continue
        x.update({(i, 0): rows[i - 1] for i in range(1, m + 1)})
        x.update({(0, j): cols[j - 1] for j in range(1, n + 1)})
        coef, t = 1, []
        for d in range(1, m + n + 1):
            diag = [x[(i, d - i)] for i in range(0, m + 1) if (i, d - i) in x]
            total = sum(diag)
            coef *= factorial(total)
            for v in diag:
                coef //= factorial(v)
            t.append(total)
        t = _strip(t)
        out[t] = (out.get(t, 0) + coef) % p
    return out


def multiply_naive_odd(p: int, a: Element, b: Element) -> dict[Element, int]:
    """Q(E1)P(R) * Q(E2)P(S) mod p as {element: nonzero coefficient}."""
    (e1, r), (e2, s) = a, b
    terms: dict[Element, int] = {(e1, r): 1}
    for k in range(e2.bit_length()):
        if not e2 >> k & 1:
            continue
        nxt: dict[Element, int] = {}
        for (e, rr), c in terms.items():
            for i in range(len(rr) + 1):
                if i and rr[i - 1] < p**k:
                    continue
                moved = _q_times(p, c, e, k + i)
                if moved is None:
                    continue
                coef, e_new = moved
                r_new = list(rr)
                if i:
                    r_new[i - 1] -= p**k
                key = (e_new, _strip(r_new))
                nxt[key] = (nxt.get(key, 0) + coef) % p
        terms = nxt
    out: dict[Element, int] = {}
    for (e, rr), c in terms.items():
        for t, coef in _p_times_p(p, rr, s).items():
            key = (e, t)
            out[key] = (out.get(key, 0) + c * coef) % p
    return {k: v for k, v in out.items() if v}
