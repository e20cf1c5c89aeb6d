"""C-motivic Ext against the published machine-generated data of Isaksen, Wang and Xu ("Stable homotopy groups of
spheres: from dimension 0 to 90", Publ. IHES 137, 2023; tests/data/iwx, with its notice).

The sphere: every generator's (stem, s, weight, tau-torsion order), and the rank of h0, h1, h2, h3 on every trigraded
piece (stem, s, weight) of Ext, an F_2-space spanned by the tau^j x of that weight. A rank does not depend on the
basis, which in a trigrading of several generators neither side fixes canonically. C(tau): every class's (stem, s,
weight) against their algebraic Novikov E2 page (Gheorghe-Wang-Xu: Ext_{A^C}(M_2/tau) is that page). Their file
lists an h1-tower (h1 target `loc`) by its bottom class alone; we count the whole tower.

Both tables use the grading of docs/motivic.md: h0 (0, 1, 0), h1 (1, 1, 1), h2 (3, 1, 2), h3 (7, 1, 4).
"""
from __future__ import annotations

import csv
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest

import nassau

DATA = Path(__file__).resolve().parent / "data" / "iwx"
STEP = {0: 1, 1: 2, 2: 4, 3: 8}  # h_i raises t by 2^i
TERM = re.compile(r"(?:t\^(\d+))?(\{\d+-\d+\})")


@dataclass
class Table:
    """Ext over F_2[tau] through a region: generators (stem, s, weight, torsion, None: tau-free) by name, and h_i x
    as (target name, power of tau) terms, for the sources whose h_i target bidegree lies in the region."""

    gens: dict
    products: dict  # (name, i) -> [(name, k)]


def published_sphere(stem: int, max_s: int) -> Table:
    """tests/data/iwx/Adams-motivic-E2-machine.csv through the region: tautorsion 0 is tau-free; an h_i target is a
    name (its tau power in h_i info) or a sum of t^k{name}."""
    gens, products = {}, {}
    with open(DATA / "Adams-motivic-E2-machine.csv", newline="") as f:
        rows = [r for r in csv.DictReader(f) if int(r["stem"]) <= stem and int(r["Adams filtration"]) <= max_s]
    for r in rows:
        torsion = int(r["tautorsion"])
        gens[r["name"]] = (int(r["stem"]), int(r["Adams filtration"]), int(r["weight"]), torsion or None)
    for r in rows:
        n, s, _, _ = gens[r["name"]]
        for i in range(4):
            if n + STEP[i] - 1 > stem or s + 1 > max_s:
                continue
            target, info = r[f"h{i}target"], r[f"h{i}info"]
            terms = [(name, int(k or 0)) for k, name in TERM.findall(target)]
            assert "+".join((f"t^{k}" if k else "") + name for name, k in terms) == target, target
            if len(terms) == 1 and info:
                terms = [(terms[0][0], int(info))]
            products[(r["name"], i)] = terms
    return Table(gens, products)


def computed(module: str, stem: int, max_s: int) -> tuple[Table, list]:
    """Our run of the region as a Table (names (stem, s, weight, index)), and its generators."""
    run = nassau.resolve(module, stem=stem, max_s=max_s, motivic=True, progress=False)

    def key(c):
        return c.stem, c.s, c.weight, c.index

    gens = {key(c): (c.stem, c.s, c.weight, c.torsion) for c in run.generators}
    products = {}
    for c in run.generators:
        for i in range(4):
            terms = run.product(f"h{i}", c)
            if terms is not None:
                products[(key(c), i)] = [(key(y), k) for y, k in terms]
    return Table(gens, products), run.generators


def rank(vectors: list[int]) -> int:
    """The F_2 rank of bit vectors."""
    basis: dict[int, int] = {}  # top bit -> vector
    for v in vectors:
        while v:
            top = v.bit_length() - 1
            if top not in basis:
                basis[top] = v
                break
            v ^= basis[top]
    return len(basis)


def h_ranks(table: Table, i: int, depth: int) -> dict[tuple[int, int, int], int]:
    """(stem, s, weight) -> the rank of h_i on that piece, for every source bidegree with products and every weight
    from its generators' highest down to depth below their lowest (below that the ranks no longer change: every
    tau^j x there with j >= depth is tau-free, and so is each term of its product)."""
    def alive(name, j: int) -> bool:  # tau^j name != 0
        torsion = table.gens[name][3]
        return torsion is None or j < torsion

    by_bidegree: dict[tuple[int, int], list] = {}
    for name, (n, s, _, _) in table.gens.items():
        if (name, i) in table.products:
            by_bidegree.setdefault((n, s), []).append(name)
    bit = {name: k for k, name in enumerate(table.gens)}
    out = {}
    for (n, s), names in by_bidegree.items():
        weights = [table.gens[x][2] for x in names]
        for w in range(min(weights) - depth, max(weights) + 1):
            images = []
            for x in names:
                j = table.gens[x][2] - w
                if j >= 0 and alive(x, j):
                    images.append(sum(1 << bit[y] for y, k in table.products[(x, i)] if alive(y, j + k)))
            out[(n, s, w)] = rank(images)
    return out


def depth(*tables: Table) -> int:
    """One more than any torsion order plus any product's power of tau."""
    torsion = max((g[3] or 0 for t in tables for g in t.gens.values()), default=0)
    power = max((k for t in tables for terms in t.products.values() for _, k in terms), default=0)
    return torsion + power + 1


def assert_sphere_matches(stem: int, max_s: int) -> None:
    theirs = published_sphere(stem, max_s)
    ours, _ = computed("S_2", stem, max_s)
    assert Counter(ours.gens.values()) == Counter(theirs.gens.values())
    assert {k[1] for k in ours.products} == {0, 1, 2, 3}
    d = depth(ours, theirs)
    for i in range(4):
        mine, published = h_ranks(ours, i, d), h_ranks(theirs, i, d)
        assert mine == published, (f"h{i}", sorted(set(mine.items()) ^ set(published.items()))[:10])
        assert any(mine.values())


def published_ctau(stem: int, max_s: int) -> Counter:
    """(stem, s, weight) -> classes, from tests/data/iwx/algNovikov-machine.csv: each row a class, and a row whose
    h1 target is `loc` the bottom of an h1-tower, h1^k x at (stem + k, s + k, weight + k) for every k."""
    out: Counter = Counter()
    with open(DATA / "algNovikov-machine.csv", newline="") as f:
        for r in csv.DictReader(f):
            n, s, w = int(r["stem"]), int(r["Adams filtration"]), int(r["weight"])
            for k in range(stem - n + 1 if r["h1target"] == "loc" else 1):
                if n + k <= stem and s + k <= max_s:
                    out[(n + k, s + k, w + k)] += 1
    return out


def assert_ctau_matches(stem: int, max_s: int) -> None:
    _, classes = computed("Ctau", stem, max_s)
    assert Counter((c.stem, c.s, c.weight) for c in classes) == published_ctau(stem, max_s)


def test_sphere_matches_the_published_chart_through_stem_40() -> None:
    """Through stem 40, s <= 20: 484 generators, the h_i ranks on every piece."""
    assert_sphere_matches(40, 20)


def test_ctau_matches_the_published_algebraic_novikov_page_through_stem_40() -> None:
    assert_ctau_matches(40, 20)


@pytest.mark.slow
def test_sphere_matches_the_published_chart_through_stem_60() -> None:
    assert_sphere_matches(60, 30)


@pytest.mark.slow
def test_ctau_matches_the_published_algebraic_novikov_page_through_stem_60() -> None:
    assert_ctau_matches(60, 30)


@pytest.mark.slow
def test_ctau_matches_the_published_algebraic_novikov_page_through_stem_90() -> None:
    """10664 classes, about a minute (F_2 over A^C/tau). s <= 38: their table ends at s = 40, where a class at its
    top row that is an h1 multiple is also listed as a tower's bottom, which the tower count takes twice."""
    assert_ctau_matches(90, 38)


def test_the_comparison_sees_a_wrong_torsion_and_a_wrong_product() -> None:
    """The checks can fail: one torsion order changed, or one product term dropped, in the published table."""
    theirs = published_sphere(20, 10)
    ours, _ = computed("S_2", 20, 10)
    assert Counter(ours.gens.values()) == Counter(theirs.gens.values())
    d = depth(ours, theirs)
    assert all(h_ranks(ours, i, d) == h_ranks(theirs, i, d) for i in range(4))
    n, s, w, _ = theirs.gens["{4-1}"]  # h1^4, killed by tau
    assert (n, s, w) == (4, 4, 4)
    wrong = Table({**theirs.gens, "{4-1}": (n, s, w, 2)}, theirs.products)
    assert Counter(ours.gens.values()) != Counter(wrong.gens.values())
    assert theirs.products[("{1-2}", 0)] == [("{2-2}", 0)]  # h0 h2
    wrong = Table(theirs.gens, {**theirs.products, ("{1-2}", 0): []})
    assert h_ranks(ours, 0, d) != h_ranks(wrong, 0, d)
