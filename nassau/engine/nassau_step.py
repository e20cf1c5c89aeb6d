"""One bidegree of Nassau's algorithm (arXiv 1910.04063; REFERENCE 5.2-5.3), for s >= 2.

Pick the largest sub-Hopf algebra B whose Ext vanishes at (s, t - top cell). Above that line the
zero-signature part of the resolution (a model of A//B tensored over B) is exact, so:
1. ker of d_{s-1} on the zero-signature rows and columns (a matrix |B| times smaller) gives the cycles,
2. the zero-signature image of d_s on the old generators is reduced, and the kernel rows whose pivots
   the image lacks become the new generators, chosen as the reference chooses them;
3. each new cycle x is completed signature by signature (lower first): the sigma-part of d(x) is cancelled
   through a quasi-inverse of d_{s-1} on the sigma rows and columns. A signature whose part of d(x) is
   already zero needs no matrix at all, so most are skipped.
The step reads only generators below t of F_{s-1} and below t-1 of F_{s-2}, so it may run as soon as
(s, t-1) and (s-1, t-1) are done.

At odd p the same step runs over F_p (x -= y for the corrections) with the sub-Hopf algebras, signatures and
vanishing line of algebra.milnor.odd_subalgebra (docs/nassau-odd.md); where no B but F_p has its line there, the
run takes the standard step instead (standard_at).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

import numpy as np

from algebra.free.free_map import FreeMap
from algebra.milnor.odd_subalgebra import OddSubalgebra, optimal_odd_subalgebra
from algebra.milnor.products import TermTables
from algebra.milnor.subalgebra import Subalgebra, optimal_subalgebra
from algebra.module.interface import Module
from fp import F2, PrimeField, QuasiInverse, quasi_inverse_with_identity, reduce_with_identity
from nassau.engine.prefetch import Prefetch, helped

if TYPE_CHECKING:
    from nassau.engine.resolution import Resolution


def nassau_qualifies(module: Module, as_cofiber: bool = True) -> str:
    """Empty if Nassau's algorithm applies to the module, else the reason it does not. A cofiber's run is the
    standard algorithm's; as_cofiber=False asks about its M alone (whose rows a cofiber's run resolves first)."""
    if module.algebra.prime == 2 and not module.profile.is_full:
        return f"it is a module over {module.profile.describe()}, not over the whole Steenrod algebra"
    if module.profile.truncated:
        return f"it is a module over the finite algebra {module.profile.describe()}"
    if as_cofiber and getattr(module, "cofiber", None) is not None:
        return "it is defined as a cofiber"
    if module.max_degree is None:
        return "it is infinite, and the algorithm's vanishing line is measured from a top cell"
    return ""


def subalgebra_for(module: Module, s: int, t: int) -> Subalgebra | OddSubalgebra:
    """B for Nassau's step at (s, t) in a resolution of the module: the largest candidate whose vanishing line,
    measured from the module's top cell, holds there (p = 2: REFERENCE 5.2; odd p: algebra.milnor.odd_subalgebra)."""
    p = module.algebra.prime
    if p == 2:
        return optimal_subalgebra(s, t - module.max_degree)
    return optimal_odd_subalgebra(p, module.profile, s, t - module.max_degree)


def standard_at(module: Module, s: int, t: int) -> bool:
    """Whether a Nassau run takes the standard step at (s, t), s >= 2: at odd p where no B but F_p has its line
    there (C3 at high s, every module below its first line). There the one block is all of F_{s-1}, and the step
    would reduce d_{s-1} and d_s both, where the standard step reduces d_s alone and reads ker d_{s-1} kept from
    (s - 1, t) (C3 through stem 150, s <= 40: 7.7 s against 3.9 s by the standard algorithm). At p = 2 the run
    keeps the reference's steps."""
    return module.algebra.prime != 2 and s >= 2 and not subalgebra_for(module, s, t).top_degree


#: Steps that found no zero-signature row in F_{s-1}(t) (so no kernel and no new generator) and built nothing;
#: steps whose zero-signature block of d_{s-1} had no column (its kernel is every row) and built no block.
COUNTERS = {"empty": 0, "no_columns": 0}


def step_nassau(res: Resolution, s: int, t: int, shortcuts: bool = True) -> int:
    """(s, t) for s >= 2 by Nassau's algorithm; returns the number of new generators. shortcuts: take the two
    counted above (False: every step goes through the general path, their twin, which tests compare)."""
    sub = subalgebra_for(res.module, s, t)
    f = res.field
    fs, tgt, nxt = res.free(s), res.free(s - 1), res.free(s - 2)
    d_prev, d_here = res.differential(s - 1), res.differential(s)
    ng_s, ng_t, ng_n = fs.gens_below(t), tgt.gens_below(t), nxt.gens_below(t - 1)
    dim_t = tgt.dimension(t, ng_t)
    z_t = np.nonzero(sub.signature_classes(tgt.basis_words(t, ng_t)[1]) == 0)[0] if dim_t else np.zeros(0, np.int64)
    if shortcuts and not len(z_t):
        # Most bidegrees of a sparse chart (S_5 through stem 400: 3717 of its 11571 steps): no zero-signature cycle
        # can exist, so nothing is built, reduced or corrected.
        COUNTERS["empty"] += 1
        res.add_generators(s, t, f.zeros(0, dim_t), ng_t)
        return 0
    z_n = np.nonzero(sub.signature_classes(nxt.basis_words(t, ng_n)[1]) == 0)[0]

    # 1. Zero-signature kernel of d_{s-1}: one batch, which finds the product tables of its own rows' terms.
    if shortcuts and not len(z_n):
        COUNTERS["no_columns"] += 1
        block = f.zeros(len(z_t), 0)
    else:
        block = signature_block(d_prev, t, sub, None, z_t, ng_n, z_n)
    _, k0 = reduce_with_identity(block, len(z_n), f)

    # 2. Zero-signature image of d_s on the old generators, and the new generators (none without a kernel: most
    # bidegrees of a sparse chart such as S_5's, where d_s need not be built at all).
    fresh = np.zeros(0, dtype=bool)
    if k0.dim:
        z_s = np.nonzero(sub.signature_classes(fs.basis_words(t, ng_s)[1]) == 0)[0]
        image = signature_block(d_here, t, sub, None, z_s, ng_t, z_t)
        hit = np.zeros(len(z_t), dtype=bool)  # the image's pivots (np.isin costs more on these few columns)
        hit[f.row_reduce(image, len(z_t))] = True
        fresh = ~hit[k0.pivots]
    count = int(fresh.sum())
    x = f.scatter(k0.basis[fresh], z_t, dim_t)
    if count:
        # 3. Corrections, signature by signature (the zero-signature part of d(x) is already zero). Every build of
        # d_{s-1} here is in degree t: its terms' product tables are found once for all of them.
        tables = d_prev.term_tables(t, ng_t)
        dx = d_prev.apply(t, x, ng_n, tables)
        x = f.subtract(x, preimages_by_signature(d_prev, t, sub, dx, ng_t, ng_n, tables, shipped_as=s - 1))
        if dx.any():
            raise AssertionError(f"Nassau step ({s}, {t}) over {sub.describe()} left a nonzero boundary")
    res.add_generators(s, t, x, ng_t)
    return count


def signature_block(d: FreeMap, t: int, sub: Subalgebra | OddSubalgebra, sig: tuple | None, rows: np.ndarray,
                    ngens: int, cols: np.ndarray, tables: TermTables | None = None) -> np.ndarray:
    """d in degree t on the given rows, only the columns `cols` (those of signature sig, None: the zero one, over
    the first ngens target generators): at p = 2 products of other signatures are never made (those read from
    product tables are dropped); at odd p they are made and dropped by the column map."""
    col_map = np.full(d.target.dimension(t - d.shift, ngens), -1, dtype=np.int64)
    col_map[cols] = np.arange(len(cols))
    return d.matrix(t, rows, ngens, col_map=col_map, ncols=len(cols), forbid=sub.forbid(sig), tables=tables)


def preimages_by_signature(d: FreeMap, t: int, sub: Subalgebra, rem: np.ndarray, src_ngens: int,
                           tgt_ngens: int, tables: TermTables | None = None, dense: bool = False,
                           shipped_as: int | None = None) -> np.ndarray:
    """y (packed over d's source in degree t, first src_ngens generators) with d(y) = rem, found signature by
    signature: zero signature first, then sub.signatures order, each part of rem cancelled through a quasi-inverse
    of d's block on that signature's rows and columns. A signature where rem is already zero costs nothing. rem is
    updated in place; it is zero at the end exactly when the blocks could absorb it (the caller checks).

    Each signature's products (d on its rows, every column) and the block's quasi-inverse depend on d only: they
    are offered to idle workers as a Prefetch, computed ahead in signature order, and the corrections here are
    plain linear algebra. The builds read the product tables of d's terms in degree t, found once (`tables`, made
    here when not given): a signature meets only a row or two of each generator, so looking the tables up in each
    build cost more than the products themselves (S_2 through stem 90, every s: 35 million lookups for 57 million
    products). d on all of a signature's rows, built once, costs less than the block and d on the rows a correction
    uses built apart (S_2 through stem 70, every s: 2.3 s against 1.3 + 1.4 s).

    `dense`: the caller expects nearly every signature to need a correction (a lift's cycles: 5861 of 6112 blocks
    in S_2's d2 lift through stem 70). Where no worker would compute pieces ahead (one thread), d is then built on
    every block's rows in one call, not one call per block, whose Python cost was a twentieth of that lift; the
    matrices, and so y, are the same.

    `shipped_as`: d is the resolution's d_{shipped_as}, so other worker processes holding the same resolution may
    compute the pieces as well (SignatureRows)."""
    f = d.field
    sig_src = sub.signature_classes(d.source.basis_words(t, src_ngens)[1])
    sig_tgt = sub.signature_classes(d.target.basis_words(t - d.shift, tgt_ngens)[1])
    dim_src = len(sig_src)
    if tables is None:
        tables = d.term_tables(t, src_ngens)
    y = f.zeros(rem.shape[0], dim_src)
    blocks = []
    for sig in (None, *sub.signatures(t)):
        word = np.uint64(0 if sig is None else sub.signature_word(sig))
        cols = np.nonzero(sig_tgt == word)[0]
        if len(cols):
            blocks.append((np.nonzero(sig_src == word)[0], cols))
    if dense and not helped() and blocks:
        image = d.matrix(t, np.concatenate([rows for rows, _ in blocks]), tgt_ngens, tables=tables)
        at = 0
        for rows, cols in blocks:
            part, at = image[at:at + len(rows)], at + len(rows)
            if f.any_in(rem, cols):
                block_inverse(f, part, cols).correct(rem, cols, rows, part, y)
        return y
    recipes = None if shipped_as is None or not helped() else lambda: [  # made if a run's idle worker asks
        SignatureRows(shipped_as, t, src_ngens, tgt_ngens, rows, cols, rem.shape[1], f.storage(len(rows)), rem.itemsize)
        for rows, cols in blocks]
    with Prefetch([partial(signature_rows, d, t, tgt_ngens, rows, cols, tables) for rows, cols in blocks],
                  recipes) as pieces:
        for i, (rows, cols) in enumerate(blocks):
            if not f.any_in(rem, cols):
                pieces.drop(i)
                continue
            inverse, image = pieces.take(i)
            inverse.correct(rem, cols, rows, image, y)
    return y


def signature_rows(d: FreeMap, t: int, ngens: int, rows: np.ndarray, cols: np.ndarray,
                   tables: TermTables | None) -> tuple[QuasiInverse, np.ndarray]:
    """d on one signature's rows (every column of the first ngens target generators), and a quasi-inverse of its
    block on that signature's columns (it sends vectors of the block's image to preimages over those rows)."""
    image = d.matrix(t, rows, ngens, tables=tables)
    return block_inverse(d.field, image, cols), image


@dataclass(frozen=True)
class SignatureRows:
    """A piece of a Nassau step as another process computes it from its own copy of the resolution: signature_rows
    of d_s in degree t on the first src_ngens generators (rows) and tgt_ngens targets (cols: the block's columns).
    width and src_width: the storage units of a row of the image and of a preimage; unit: the bytes of one."""

    s: int
    t: int
    src_ngens: int
    tgt_ngens: int
    rows: np.ndarray
    cols: np.ndarray
    width: int
    src_width: int
    unit: int

    def result_bytes(self) -> int:
        """At most the bytes of the piece's arrays: the image, and the quasi-inverse's preimages and pivots (rank
        at most min(rows, cols))."""
        rank = min(len(self.rows), len(self.cols))
        return (len(self.rows) * self.width + rank * self.src_width) * self.unit + rank * 8

    def __call__(self, res: Resolution, tables: dict) -> tuple[QuasiInverse, np.ndarray]:
        """`tables`: the term tables found so far by this process's calls, by degree (found once for a step's
        pieces)."""
        d = res.differential(self.s)
        key = (self.s, self.t, self.src_ngens)
        if key not in tables:
            tables.clear()
            tables[key] = d.term_tables(self.t, self.src_ngens)
        return signature_rows(d, self.t, self.tgt_ngens, self.rows, self.cols, tables[key])


def block_inverse(f: F2 | PrimeField, image: np.ndarray, cols: np.ndarray) -> QuasiInverse:
    """A quasi-inverse of the block of a signature's rows of d (image) on that signature's columns."""
    return quasi_inverse_with_identity(f.gather(image, cols), len(cols), f)
