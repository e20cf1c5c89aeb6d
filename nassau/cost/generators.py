"""How many generators a minimal resolution will have in each bidegree: exact where a small run (the probe) has
computed them, predicted beyond.

The prediction keeps two kinds of generators apart. A tower (a stem whose generators go on through every row the
probe reaches above half its height, as h_0^k at stem 0 of the sphere) goes on through every row. The rest follow a
self-similar density: the number of generators through stem n grows as a known curve, scaled to the probe's count
at its last stem, and each stem's generators are spread over the rows as the probe's last stems spread theirs over
s / (n + 1) (which puts them below the same vanishing line). Over the whole algebra at p = 2 the curve is the
sphere's (SPHERE_2: a module's Ext grows as its cells' spheres' do); elsewhere a power (n + 1)^(beta + 1) fitted to
the probe's cumulative counts over the upper half of its stems.
"""
from __future__ import annotations

import numpy as np

#: Width, in s / (n + 1), of one bin of the rows' profile.
PROFILE_BIN = 0.02
#: The sphere's generators at p = 2 through stem n, every s, its tower at stem 0 aside: stems 10-100 from our runs,
#: 130, 140, 150 from the runs of docs/speed.md's large charts (4364, 5495, 6795 generators with s <= 152, less the
#: tower's 153). Beyond 150 the last stretch's power goes on (cumulative growth ~ n^3.2 there).
SPHERE_2 = {10: 16, 20: 56, 30: 108, 40: 223, 50: 343, 60: 483, 70: 782, 80: 1088, 90: 1441, 100: 1925, 130: 4211,
            140: 5342, 150: 6642}
#: The growth exponent's range: a probe whose counts say more is mostly noise.
BETA_RANGE = (0.0, 3.0)


class GeneratorModel:
    """Generators per bidegree from a probe's exact counts (s, n) -> count (n the stem from the module's bottom)
    over the stems 0..probe_stem and rows 0..probe_s."""

    def __init__(self, counts: dict[tuple[int, int], int], probe_stem: int, probe_s: int,
                 reference: dict[int, int] | None = None) -> None:
        self.probe_stem, self.probe_s = probe_stem, probe_s
        self.exact = np.zeros((probe_s + 1, probe_stem + 1))
        for (s, n), k in counts.items():
            if s <= probe_s and 0 <= n <= probe_stem:
                self.exact[s, n] = k
        low = max(1, probe_s // 2)
        #: Per stem, the generators in every row above half the probe's height: its tower.
        self.towers = self.exact[low:].min(axis=0) if probe_s >= 2 else np.zeros(probe_stem + 1)
        rest = self.exact - self.towers[None, :]
        per = rest.sum(axis=0)
        self.beta, self.scale = _growth(per)
        self.reference = reference if reference and probe_stem >= min(reference) and per.sum() > 0 else None
        self.profile = _profile(rest, probe_stem)

    def cumulative(self, n: np.ndarray) -> np.ndarray:
        """Generators through stem n, towers aside: the reference curve (or the fitted power) through the probe's."""
        if self.reference is None:
            return self.scale * (n + 1.0) ** (self.beta + 1)
        stems = np.array(sorted(self.reference), dtype=float)
        logs = np.log([self.reference[k] for k in sorted(self.reference)])
        x = np.log(np.maximum(n, 1.0))
        slope = (logs[-1] - logs[-2]) / (np.log(stems[-1]) - np.log(stems[-2]))
        curve = np.where(x > np.log(stems[-1]), logs[-1] + slope * (x - np.log(stems[-1])),
                         np.interp(x, np.log(stems), logs))
        at_probe = float(np.interp(np.log(max(self.probe_stem, 1)), np.log(stems), logs))
        total = float(self.exact[:, 1:].sum() - self.towers[1:].sum() * (self.probe_s + 1))
        return total * np.exp(curve - at_probe)

    def per_stem(self, n: np.ndarray) -> np.ndarray:
        """Generators per stem, towers aside."""
        return np.maximum(self.cumulative(n) - self.cumulative(n - 1.0), 0.0)

    def grid(self, max_s: int, max_n: int) -> np.ndarray:
        """Predicted generators at (s, n) for s <= max_s, n <= max_n: the probe's own counts inside it."""
        s = np.arange(max_s + 1)[:, None]
        n = np.arange(max_n + 1)[None, :]
        u = s / (n + 1.0)
        bins = np.minimum((u / PROFILE_BIN).astype(np.int64), len(self.profile) - 1)
        share = np.where(u < PROFILE_BIN * (len(self.profile) - 1), self.profile[bins], 0.0)
        out = self.per_stem(n) * share / (PROFILE_BIN * (n + 1.0))
        towers = np.zeros(max_n + 1)
        k = min(max_n, self.probe_stem) + 1
        towers[:k] = self.towers[:k]
        out = out + towers[None, :]
        ks, kn = min(max_s, self.probe_s) + 1, min(max_n, self.probe_stem) + 1
        out[:ks, :kn] = self.exact[:ks, :kn]
        return out


def _growth(per_stem: np.ndarray) -> tuple[float, float]:
    """(beta, c) with c (n + 1)^(beta + 1) the cumulative count, fitted over the upper half of the stems."""
    total = np.cumsum(per_stem)
    n = np.arange(len(per_stem))
    upper = (n >= len(n) // 2) & (total > 0)
    if upper.sum() < 2:
        return 0.0, float(total[-1]) / len(n) if len(n) else 0.0
    slope, intercept = np.polyfit(np.log(n[upper] + 1.0), np.log(total[upper]), 1)
    beta = float(np.clip(slope - 1, *BETA_RANGE))
    # the scale from the last count, the best measured, with the clipped exponent
    return beta, float(total[-1]) / (len(n) ** (beta + 1))


def _profile(rest: np.ndarray, probe_stem: int) -> np.ndarray:
    """The share of a stem's generators in each bin of s / (n + 1), over the probe's upper half of stems."""
    bins = np.zeros(int(1 / PROFILE_BIN) + 2)
    for n in range(max(1, probe_stem // 2), probe_stem + 1):
        for s in np.nonzero(rest[:, n] > 0)[0]:
            bins[min(int(s / (n + 1.0) / PROFILE_BIN), len(bins) - 1)] += rest[s, n]
    total = bins.sum()
    return bins / total if total else bins
