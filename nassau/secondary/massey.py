"""Massey products <a, b, c> in Mod_{C lambda^2}, as the reference's secondary_massey prints them
(REFERENCE-SECONDARY 5).

a = [a_E] + lambda a_L is a class of Mod_{C lambda^2} over M at A, b = [b_E] + lambda b_L one over k at B, with
a_E b_E = 0 in Ext. Their product is then lambda d2(z) for a z of Ext(M) at A + B + (1, -1) (the first homotopy).
The chain maps c^a: F^M -> F^k and c^b: F^k -> F^k then have a null-homotopy K of c^b c^a that sends the
generators of F^M_{s_A + s_B - 1} in degree t_A + t_B to z_j times the unit (zero elsewhere on that stage), lifted
above it like any null-homotopy (nassau.lifting.chain_homotopy). Its secondary lift (SecondaryChainHomotopy) witnesses
-c^b c^a + d K + K d = 0 in the secondary algebra. For every c of Ext(k) in the E3 kernel of b (the classes
[c_E] + lambda c_L with b c = 0 in Mod_{C lambda^2}), <a, b, c> up to sign is read off K, its secondary lift, c^a
and b's null-homotopy of b c: an Ext part at c + A + B + (1, -1) and a lambda part one filtration up.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from charts.model import BidegreeNS
from fp import Augmented, from_bool, to_bool
from nassau.engine.region import Region
from nassau.engine.resolution import Resolution
from nassau.lifting.chain_homotopy import ChainHomotopy
from nassau.lifting.chain_map import ChainMap
from nassau.products.ext_class import ClassError, ExtClass
from nassau.products.filtration_one import h_matrix
from nassau.products.product_lines import vector_text
from nassau.secondary.e3_page import ext_dim
from nassau.secondary.homomorphism import SecondaryHomomorphism, readout
from nassau.secondary.lift import SecondaryError, SecondaryLift, Term
from nassau.secondary.product import SecondaryExt, basis_text, computed

_VEC = r"\[\s*(?:[01](?:\s*,\s*[01])*)?\s*\]"
_NAME = r"[A-Za-z_][A-Za-z0-9_^]*"
_LAMBDA = r"(?:λ|lambda\s)"
_CLASS = re.compile(rf"^\s*(?:(?P<pure>{_LAMBDA})\s*)?(?P<name>{_NAME})\s*=\s*(?P<n>-?\d+)\s*,\s*(?P<s>\d+)\s*,\s*"
                    rf"(?P<v>{_VEC})\s*(?:\+\s*{_LAMBDA}\s*(?P<lname>{_NAME})\s*=\s*(?P<w>{_VEC}))?\s*$")


@dataclass(frozen=True)
class LambdaClass:
    """[ext] + lambda lam at (n, s): ext a vector of Ext at (n, s), lam one at (n, s + 1); a part with an empty name
    is zero."""

    n: int
    s: int
    ext_name: str
    ext: tuple[int, ...]
    lam_name: str
    lam: tuple[int, ...]

    @property
    def display(self) -> str:
        """The reference's name: `[x]`, `λy` or `[x] + λy`."""
        if self.ext_name and self.lam_name:
            return f"[{self.ext_name}] + λ{self.lam_name}"
        return f"[{self.ext_name}]" if self.ext_name else f"λ{self.lam_name}"

    def check_in(self, res: Resolution, what: str) -> None:
        """Refuse a class outside the computed range, or with vectors of the wrong lengths."""
        if self.ext_name:
            ExtClass(self.n, self.s, self.ext).check_in(res, what)
        elif not res.is_done(self.s, self.n + self.s):
            raise ClassError(f"{what} lies outside the computed range of {res.module.name}")
        if self.lam_name:
            ExtClass(self.n, self.s + 1, self.lam).check_in(res, f"the lambda part of {what}")

    def ext_array(self, res: Resolution) -> np.ndarray:
        """The Ext part as a vector (zeros when it has no name)."""
        dim = res.new_gens.get((self.s, self.n + self.s), 0)
        return np.array(self.ext, dtype=np.uint8) if self.ext_name else np.zeros(dim, dtype=np.uint8)


def parse_lambda_class(text: str) -> LambdaClass:
    """`NAME=n,s,[v]`, `NAME=n,s,[v]+λNAME2=[w]` or `λNAME2=n,s,[w]` (the class at (n, s), w at (n, s + 1);
    `lambda ` may stand for λ)."""
    m = _CLASS.match(text)
    if not m:
        raise ClassError(f"cannot read the class {text!r}: expected NAME=n,s,[v], NAME=n,s,[v]+λNAME2=[w] or "
                         "λNAME2=n,s,[w]")
    n, s, v = int(m["n"]), int(m["s"]), _vector(m["v"])
    if m["pure"]:
        if m["lname"]:
            raise ClassError(f"cannot read the class {text!r}: a lambda class has one part")
        return LambdaClass(n, s, "", (), m["name"], v)
    return LambdaClass(n, s, m["name"], v, m["lname"] or "", _vector(m["w"]) if m["lname"] else ())


def _vector(text: str) -> tuple[int, ...]:
    inner = text.strip()[1:-1].strip()
    return tuple(int(x) for x in inner.split(",")) if inner else ()


@dataclass(frozen=True)
class MasseyLine:
    """<a, b, c> = +-[ext] + lambda lam for c = [c_ext] + lambda c_lam at bidegree c (n, s)."""

    c: BidegreeNS
    c_ext: tuple[int, ...]
    c_lam: tuple[int, ...]
    ext: tuple[int, ...]
    lam: tuple[int, ...]

    def text(self, a: str, b: str) -> str:
        name = f"[{basis_text(self.c, self.c_ext)}]" if any(self.c_ext) else ""
        if any(self.c_lam):
            lam = basis_text((self.c[0], self.c[1] + 1), self.c_lam)
            name += (" + " if name else "") + ("λ" + lam if sum(self.c_lam) == 1 else f"λ({lam})")
        return f"<{a}, {b}, {name}> = ±{vector_text(self.ext)} + λ{vector_text(self.lam)}"


class SecondaryChainHomotopy(SecondaryLift):
    """The secondary lift of a null-homotopy K of c^b c^a (shift (s_A + s_B, t_A + t_B)): composite
    -sigma(c^b) sigma(c^a) + sigma(d) sigma(K) + sigma(K) sigma(d), which may hit generators."""

    def __init__(self, k: ChainMap, a: SecondaryHomomorphism, b: SecondaryHomomorphism, a_lam: ChainMap | None,
                 b_lam: ChainMap | None, region: Region) -> None:
        super().__init__(k.source, k.target, (k.s_shift + 1, k.t_shift), region, f"the secondary lift of {k.name}")
        self.k, self.a, self.b, self.a_lam, self.b_lam = k, a, b, a_lam, b_lam
        self.module_lift, self.unit_lift = a.source_lift, a.target_lift

    def composite_terms(self, s: int) -> list[Term]:
        ca, cb, k = self.a.c, self.b.c, self.k
        return [(3, ca.free_map(s), cb.free_map(s - ca.s_shift)),
                (1, k.free_map(s), self.target.differential(s - self.s_shift + 1)),
                (1, self.source.differential(s), k.free_map(s - 1))]

    def inputs_ready(self, s: int, t: int) -> bool:
        ca, cb, k = self.a.c, self.b.c, self.k
        sa, ta = ca.s_shift, ca.t_shift
        maps = [(k, s, t), (k, s - 2, t - 1), (ca, s, t), (cb, s - sa, t - ta), (cb, s - sa - 1, t - ta - 1),
                (self.module_lift, s, t), (self.unit_lift, s - self.s_shift + 1, t - self.st), (self.a, s, t),
                (self.b, s - sa, t - ta), (self.a_lam, s, t), (self.b_lam, s - sa, t - ta)]
        return all(m is None or m.is_lifted(ms, mt) for m, ms, mt in maps)

    def extra_terms(self, s: int, t: int, ngens: int) -> np.ndarray:
        ca, cb, k = self.a.c, self.b.c, self.k
        sa, ta = ca.s_shift, ca.t_shift
        out = self.unit_lift.act(s - self.s_shift + 1, t - self.st, k.images(s, t), ngens, full=True)
        out ^= k.free_map(s - 2).apply(t - 1, self.module_lift.images(s, t), ngens)
        ca_x = ca.images(s, t)
        out ^= self.b.act(s - sa, t - ta, ca_x, ngens, full=True)
        if self.b_lam is not None:
            out ^= self.b_lam.free_map(s - sa).apply(t - ta, ca_x, ngens)
        lower = [self.a.images(s, t)] + ([self.a_lam.images(s, t)] if self.a_lam is not None else [])
        return out ^ cb.free_map(s - sa - 1).apply(t - ta - 1, _xor(lower), ngens)


def _xor(rows: list[np.ndarray]) -> np.ndarray:
    """The sum of packed row blocks recorded over different numbers of generators (zero-padded to the widest)."""
    out = np.zeros((rows[0].shape[0], max(r.shape[1] for r in rows)), dtype=np.uint64)
    for r in rows:
        out[:, :r.shape[1]] ^= r
    return out


def secondary_massey(ext: SecondaryExt, a: LambdaClass, b: LambdaClass) -> list[MasseyLine]:
    """<a, b, c> for every c of Ext(k) in the E3 kernel of b whose bracket lands where M is computed."""
    return _lines(ext, bracket_lift(ext, a, b))


def bracket_lift(ext: SecondaryExt, a: LambdaClass, b: LambdaClass) -> SecondaryChainHomotopy:
    """Lift c^a, c^b and the lambda parts' maps, their secondary lifts, the first homotopy z, K and K's secondary
    lift, each after what it reads."""
    res, k = ext.module.source, ext.unit.source
    if not (a.ext_name or a.lam_name) or not (b.ext_name or b.lam_name):
        raise ClassError("a and b need an Ext part or a lambda part: the Massey product of zero is not computed")
    a.check_in(res, "the class a")
    b.check_in(k, "the class b")
    m_reg, k_reg = ext.module_region, ext.unit_region
    ca = ChainMap.from_class(res, k, a.n, a.s, a.ext_array(res), m_reg, a.ext_name)
    cb = ChainMap.from_class(k, k, b.n, b.s, b.ext_array(k), k_reg, b.ext_name)
    a_lam = ChainMap.from_class(res, k, a.n, a.s + 1, np.array(a.lam, np.uint8), m_reg, a.lam_name) \
        if a.lam_name else None
    b_lam = ChainMap.from_class(k, k, b.n, b.s + 1, np.array(b.lam, np.uint8), k_reg, b.lam_name) \
        if b.lam_name else None
    ext.lift([m for m in (ca, cb, a_lam, b_lam) if m is not None])
    ha, hb = ext.secondary_map(ca), ext.secondary_map(cb)
    product, _ = ha.hom_k_with((b.n, b.s), b.ext_array(k)[None, :], a_lam)
    if product.any():
        raise SecondaryError(f"<a, b, -> is not defined: a b = {vector_text(product[0])} is not zero in Ext")
    b_lam_vec = np.array(b.lam, dtype=np.uint8) if b.lam_name else np.zeros(0, dtype=np.uint8)
    z = ha.product_nullhomotopy((b.n, b.s), b.ext_array(k), b_lam_vec, a_lam, ext.module_page)
    homotopy = _seeded_homotopy(ca, cb, z, m_reg)
    ext.lift([homotopy])
    lift = SecondaryChainHomotopy(homotopy, ha, hb, a_lam, b_lam, m_reg)
    ext.lift([lift])
    return lift


def _seeded_homotopy(ca: ChainMap, cb: ChainMap, z: np.ndarray, region: Region) -> ChainHomotopy:
    """The null-homotopy K of c^b c^a whose first stage sends the generators of F^M_{s_A + s_B - 1} of degree
    t_A + t_B to z_j times the unit (zero elsewhere)."""
    k = ChainHomotopy(ca, cb, region, f"K({ca.name}, {cb.name})")
    zero = k.initial

    def first(t: int) -> np.ndarray:
        return z.reshape(len(z), 1) if t == k.t_shift else zero(t)

    k.initial = first
    return k


def _lines(ext: SecondaryExt, lift: SecondaryChainHomotopy) -> list[MasseyLine]:
    res, k = ext.module.source, ext.unit.source
    hb, b_lam = lift.b, lift.b_lam
    ca, cb, homotopy = lift.a.c, hb.c, lift.k
    sa, ta = ca.s_shift, ca.t_shift
    sb, tb = cb.s_shift, cb.t_shift
    sigma_s, sigma_t = sa + sb, ta + tb
    out = []
    for s_c, t_c in sorted(ext.unit_region.bidegrees(), key=lambda b: (b[1] - b[0], b[0])):
        c = (t_c - s_c, s_c)
        n, s = c[0] + sigma_t - sigma_s + 1, c[1] + sigma_s - 1  # the bracket's bidegree
        if not computed(ext, n + 1, s - 1) or not computed(ext, n, s + 1):
            continue
        if not ext_dim(res, n, s) and not ext_dim(res, n, s + 1):
            continue
        kernel = _e3_kernel(ext, hb, b_lam, c)
        if not len(kernel):
            continue
        dim_c = ext_dim(k, *c)
        m0, mt, m1 = readout(homotopy, s, n + s), readout(homotopy, s + 1, n + s + 1), readout(lift, s + 1, n + s + 1)
        mp = h_matrix(res, 0, n, s).astype(np.int64)
        ma, mb = readout(ca, s, n + s), readout(cb, c[1] + sb, c[0] + c[1] + tb)
        sq1 = _sq1_readout(ca, k, (c[0] + tb - sb, c[1] + sb), (n, s + 1))
        for g in kernel:
            g_ext, g_lam = g[:dim_c].astype(np.int64), g[dim_c:].astype(np.int64)
            scratch = g_ext @ m0
            lam = g_ext @ m1 + g_lam @ mt
            z = hb.product_nullhomotopy(c, g[:dim_c], g[dim_c:], b_lam, ext.unit_page).astype(np.int64)
            scratch = scratch + 3 * (z @ ma)
            lam = lam + (scratch // 2 % 2) @ mp
            # The null-homotopy of 2: where b c_E is 2 mod 4, 2 = lambda h0 and c^a carries Sq1 into lambda. (The
            # reference reads Sq1 g_i in F^k_{c.s + s_A + s_B} instead of c^a's own module; no golden reaches here.)
            twice = (g_ext @ mb) // 2 % 2
            lam = lam + twice @ sq1
            out.append(MasseyLine(c, tuple(g[:dim_c].tolist()), tuple(g[dim_c:].tolist()),
                                  tuple((scratch % 2).tolist()), tuple((lam % 2).tolist())))
    return out


def _sq1_readout(ca: ChainMap, k: Resolution, prod: BidegreeNS, lam_src: BidegreeNS) -> np.ndarray:
    """(generators of F^k at prod) x (generators of F^M at lam_src): the coefficient of Sq1 g_i in c^a(G)."""
    fs = k.free(prod[1])
    t = prod[0] + prod[1]
    first, last = fs.gens_below(t), fs.gens_below(t + 1)
    src = ca.source.free(lam_src[1])
    t_src = lam_src[0] + lam_src[1]
    gens = range(src.gens_below(t_src), src.gens_below(t_src + 1))
    out = np.zeros((last - first, len(gens)), dtype=np.int64)
    fm = ca.free_map(lam_src[1])
    for col, g in enumerate(gens):
        vec, ngens = fm.output(g)
        off = fs.offsets(t + 1, ngens)
        for row, i in enumerate(range(first, min(last, ngens))):
            idx = int(off[i])  # Sq1 is the only basis element of degree 1
            out[row, col] = (int(vec[idx >> 6]) >> (idx & 63)) & 1
    return out


def _e3_kernel(ext: SecondaryExt, hb: SecondaryHomomorphism, b_lam: ChainMap | None, c: BidegreeNS) -> np.ndarray:
    """The classes [g_E] + lambda g_L at c with b (that class) = 0 in Mod_{C lambda^2}, as the RREF kernel rows
    (uint8, over Ext at c then at c + (0, 1))."""
    k, cb = ext.unit.source, hb.c
    page, page_lam = ext.unit_page.page(*c), ext.unit_page.page(c[0], c[1] + 1)
    dim_c, dim_c_lam = ext_dim(k, *c), ext_dim(k, c[0], c[1] + 1)
    n, s = c[0] + cb.t_shift - cb.s_shift, c[1] + cb.s_shift
    dim_p, dim_p_lam = ext_dim(k, n, s), ext_dim(k, n, s + 1)
    gens = page.subspace_gens()
    product = (gens.astype(np.int64) @ readout(cb, s, n + s)) % 2
    e2 = _kernel([product, gens], [dim_p, dim_c])
    lam_rows = page_lam.non_boundaries
    rows = len(e2) + len(lam_rows)
    blocks = [np.zeros((rows, dim_p), np.uint8), np.zeros((rows, dim_p_lam), np.uint8),
              np.zeros((rows, dim_c), np.uint8), np.zeros((rows, dim_c_lam), np.uint8)]
    if len(e2):
        blocks[0][:len(e2)], blocks[1][:len(e2)] = hb.hom_k_with(c, e2, b_lam, ext.unit_page)
        blocks[2][:len(e2)] = e2
    if lam_rows:
        m = readout(cb, s + 1, n + s + 1).astype(np.uint8)
        times = ext.unit_page.page(n, s + 1).reduce_by_quotient(m[lam_rows])
        blocks[1][len(e2):] = times
        blocks[3][len(e2):][np.arange(len(lam_rows)), lam_rows] = 1
    return _kernel(blocks, [dim_p, dim_p_lam, dim_c, dim_c_lam], split=2)


def _kernel(blocks: list[np.ndarray], widths: list[int], split: int = 1) -> np.ndarray:
    """Row-reduce [block_0 | block_1 | ...] (uint8 rows) and return the rows whose pivot lies in the blocks from
    `split` on, restricted to them: the RREF kernel of the map given by the first blocks."""
    rows = blocks[0].shape[0]
    lead, rest = sum(widths[:split]), sum(widths[split:])
    if not rows or not rest:
        return np.zeros((0, rest), dtype=np.uint8)
    aug = Augmented(rows, [lead, rest])
    aug.set_segment(0, from_bool(np.concatenate(blocks[:split], axis=1).astype(bool)))
    aug.set_segment(1, from_bool(np.concatenate(blocks[split:], axis=1).astype(bool)))
    kernel = aug.kernel(aug.row_reduce(), 1)
    return to_bool(kernel.basis, rest).astype(np.uint8)
