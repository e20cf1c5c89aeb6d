"""How many generators a minimal resolution will have in each bidegree: exact where a small run (the probe) has
computed them, predicted beyond.

The prediction keeps two kinds of generators apart. A tower (a stem whose generators go on through every row the
probe reaches above half its height, as h_0^k at stem 0 of the sphere) goes on through every row. The rest follow a
density: the number of generators through stem n grows as a known curve, scaled to the probe's count at its last
stem, and each stem's generators are spread over the rows as the probe's last stems spread theirs over s / (n + 1)
(which puts them below the same vanishing line). Over the whole algebra at p = 2 the curve is the
sphere's (SPHERE_2: a module's Ext grows as its cells' spheres' do), at p = 3 likewise (SPHERE_3), and the rows'
profile moves with the sphere's drift toward the lower rows (Drift); elsewhere a power (n + 1)^(beta + 1) fitted to
the probe's cumulative counts over the upper half of its stems, and the profile held.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: Width, in s / (n + 1), of one bin of the rows' profile.
PROFILE_BIN = 0.02
#: The sphere's generators at p = 2 through stem n, every s, its tower at stem 0 aside: stems 10-100 from our runs,
#: 130, 140, 150 from the runs of docs/speed.md's large charts (4364, 5495, 6795 generators with s <= 152, less the
#: tower's 153). Beyond 150 the last stretch's power goes on (cumulative growth ~ n^3.2 there).
SPHERE_2 = {10: 16, 20: 56, 30: 108, 40: 223, 50: 343, 60: 483, 70: 782, 80: 1088, 90: 1441, 100: 1925, 130: 4211,
            140: 5342, 150: 6642}
#: The sphere's generators at p = 3 through stem n, every s, its tower at stem 0 aside (our run of S_3 through stem
#: 300, s <= 78, Nassau's algorithm: 16859 generators beside the tower's 79). Fitted to its probe (through stem 90),
#: a power put S_3 through stem 300, s <= 30, at 3373 generators of 8325: the growth steepens past the probe (the
#: cumulative count goes as n^2.3 over stems 45-90, n^3.6 over 280-300).
SPHERE_3 = {10: 4, 20: 14, 30: 33, 40: 71, 50: 109, 60: 160, 70: 227, 80: 319, 90: 443, 100: 594, 110: 819, 120: 1036,
            130: 1285, 140: 1584, 150: 1935, 160: 2315, 170: 2742, 180: 3260, 190: 3789, 200: 4365, 210: 5022,
            220: 5845, 230: 6713, 240: 7707, 250: 8921, 260: 10190, 270: 11577, 280: 13156, 290: 14946, 300: 16859}


@dataclass(frozen=True)
class Drift:
    """How the sphere's rows share a stem's generators (PROFILE_BIN bins of s / (n + 1), from the lowest) over two
    stretches of stems, its probe's upper half and one far beyond: the share moves toward the lower rows as the stems
    grow, and a probe's own profile moves with it (GeneratorModel.profiles)."""

    near: tuple[int, int]
    near_profile: tuple[float, ...]
    far: tuple[int, int]
    far_profile: tuple[float, ...]


#: S_2 from the frontier's run through stem 180, s <= 152: stems 20-40 (the probe's upper half) put their generators at
#: a mean s / (n + 1) of 0.270, stems 150-180 at 0.191. With the probe's profile held the model put the work of S_2
#: through stems 100 (s <= 53), 150 and 180 (s <= 152) at 0.94, 0.89 and 0.86 of what the runs' own generators give;
#: moved by the drift, at 1.01, 1.00 and 1.01.
DRIFT_2 = Drift((20, 40), (0.0, 0.0059, 0.0118, 0.0353, 0.0412, 0.0294, 0.0588, 0.0471, 0.0412, 0.0471, 0.0471, 0.0588,
                           0.0529, 0.0294, 0.0529, 0.0529, 0.0294, 0.0588, 0.0353, 0.0235, 0.0471, 0.0471, 0.0353,
                           0.0471, 0.0, 0.0529, 0.0118),
                (150, 180), (0.0013, 0.0192, 0.045, 0.0698, 0.0744, 0.0709, 0.065, 0.0692, 0.0678, 0.0671, 0.0653,
                             0.0542, 0.0525, 0.0456, 0.0427, 0.0323, 0.0279, 0.0269, 0.0254, 0.0186, 0.0125, 0.0108,
                             0.0115, 0.011, 0.0094, 0.0038))
#: S_3 from the same run: stems 45-90 (the probe's upper half) put their generators at a mean s / (n + 1) of 0.156,
#: stems 250-300 at 0.123; with the probe's profile held, S_3 through stem 300, s <= 30 came out at 6273 generators
#: of 8325.
DRIFT_3 = Drift((45, 90), (0.0, 0.0167, 0.039, 0.0641, 0.078, 0.0864, 0.0724, 0.039, 0.0613, 0.1337, 0.1978, 0.1309,
                           0.0808),
                (250, 300), (0.0046, 0.0369, 0.0851, 0.1056, 0.1062, 0.1077, 0.0854, 0.094, 0.1185, 0.105, 0.0869,
                             0.0488, 0.0152))


@dataclass(frozen=True)
class Sphere:
    """What our runs know of the sphere's resolution at a prime, over the whole algebra: its generators through each
    stem (towers aside) and, where measured, the drift of their rows."""

    cumulative: dict[int, int]
    drift: Drift | None = None


SPHERES = {2: Sphere(SPHERE_2, DRIFT_2), 3: Sphere(SPHERE_3, DRIFT_3)}
#: The growth exponent's range: a probe whose counts say more is mostly noise.
BETA_RANGE = (0.0, 3.0)


class GeneratorModel:
    """Generators per bidegree from a probe's exact counts (s, n) -> count (n the stem from the module's bottom)
    over the stems 0..probe_stem and rows 0..probe_s."""

    def __init__(self, counts: dict[tuple[int, int], int], probe_stem: int, probe_s: int,
                 reference: Sphere | None = None) -> None:
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
        known = reference is not None and probe_stem >= min(reference.cumulative) and per.sum() > 0
        self.reference = reference.cumulative if known else None
        self.drift = reference.drift if known else None
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
        profiles = self.profiles(np.arange(max_n + 1))
        share = np.where(u < PROFILE_BIN * (len(self.profile) - 1), profiles[n, bins], 0.0)
        out = self.per_stem(n) * share / (PROFILE_BIN * (n + 1.0))
        towers = np.zeros(max_n + 1)
        k = min(max_n, self.probe_stem) + 1
        towers[:k] = self.towers[:k]
        out = out + towers[None, :]
        ks, kn = min(max_s, self.probe_s) + 1, min(max_n, self.probe_stem) + 1
        out[:ks, :kn] = self.exact[:ks, :kn]
        return out

    def profiles(self, n: np.ndarray) -> np.ndarray:
        """The rows' profile at each stem n: the probe's, moved by the sphere's drift (where it is known) as far as
        log n has gone from the middle of its near stretch to the middle of its far one, and no further."""
        out = np.repeat(self.profile[None, :], len(n), axis=0)
        if self.drift is None:
            return out
        d = self.drift
        shift = np.zeros_like(self.profile)
        shift[:len(d.far_profile)] += d.far_profile
        shift[:len(d.near_profile)] -= d.near_profile
        start, end = (np.log(sum(d.near) / 2 + 1.0), np.log(sum(d.far) / 2 + 1.0))
        gone = np.clip((np.log(n + 1.0) - start) / (end - start), 0.0, 1.0)
        out = np.maximum(out + gone[:, None] * shift[None, :], 0.0)
        total = out.sum(axis=1, keepdims=True)
        return np.where(total > 0, out / np.where(total > 0, total, 1.0), 0.0)


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
