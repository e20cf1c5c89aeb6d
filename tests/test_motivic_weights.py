"""Weights in C-motivic runs (docs/motivic.md), checked on what a user sees: the usual lift of every bundled cell
complex (each connected piece's lowest cell at weight 0, Sq^(2^k) adding 2^(k-1), Sq1 0); the motivic Ext of the
two-cell complexes C2, Ceta, Cnu, Csigma against the long exact sequence of the sphere's motivic Ext and h0..h3 (of
weights 0, 1, 2, 4); every printed product's power of tau against the printed weights; `--max-weight W` keeping
the generators of weight W itself."""
from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

import nassau
from algebra.module.loader import load_module
from algebra.module.motivic import load_motivic
from algebra.module.spec import ModuleError
from tests.helpers import run_cli
from tests.oracles.motivic import rank

BUNDLED = Path(__file__).resolve().parent.parent / "algebra" / "module" / "bundled"

#: The usual lift's weights, cell by cell, of every bundled module that has one (docs/motivic.md: C2, Ceta, Cnu,
#: Csigma have cells (0, 0) and (1, 0), (2, 1), (4, 2), (8, 4)); the rest worked out by the same rule.
USUAL = {
    "S_2": {"x0": 0},
    "C2": {"x0": 0, "x1": 0},
    "Ceta": {"x0": 0, "x2": 1},
    "Cnu": {"x0": 0, "x4": 2},
    "Csigma": {"x0": 0, "x8": 4},
    "C2v14": {"x0": 0, "x1": 0},
    "C4": {"x0": 0},
    "Ceta2": {"x0": 0},
    "C2_eta": {"x0": 0, "x1": 0, "x3": 1},  # Sq1 x0 = x1, Sq2 x1 = x3
    "C2_sm_Ceta": {"x0*x0": 0, "x1*x0": 0, "x0*x2": 1, "x1*x2": 1},
    "RP4": {"a1": 0, "a2": 0, "a3": 1, "a4": 1},  # Sq1 a1 = a2, Sq2 a1 = a3, Sq1 a3 = Sq2 a2 = a4
    "DA1": {"x0": 0, "x2": 1, "x4": 2, "x61": 3, "x62": 3, "x8": 4, "x10": 5, "x12": 6},
}

#: h_i at (stem, s, weight) = (2^i - 1, 1, w(Sq^(2^i))).
H_WEIGHT = {"h0": 0, "h1": 1, "h2": 2, "h3": 4}


def lifted_modules() -> list[str]:
    """Every bundled module that has a motivic lift (the others are refused in one line)."""
    out = []
    for path in sorted(BUNDLED.glob("*.json")):
        try:
            load_motivic(path.stem)
        except ModuleError:
            continue
        out.append(path.stem)
    return out


def test_every_bundled_lift_is_listed() -> None:
    assert sorted(lifted_modules()) == sorted(USUAL)


@pytest.mark.parametrize("name", sorted(USUAL))
def test_bundled_cell_complexes_have_the_usual_weights(name: str) -> None:
    """The weights as listed, and the rule itself on every Sq^(2^k) term of the module's actions: the term's cell
    has the weight of the cell it comes from plus 2^(k-1) (Sq1: 0), and each connected piece's lowest cell 0."""
    mod = load_motivic(name)
    m = load_module(name)
    got = {m.basis_name(d, i): int(w[i]) for d, w in mod.weights.items() for i in range(len(w))}
    assert got == USUAL[name]
    piece = {c: c for c in got}  # union-find over the cells joined by an operation

    def root(c: str) -> str:
        while piece[c] != c:
            c = piece[c]
        return c

    for k in range(max(m.max_degree - m.min_degree, 1).bit_length()):
        op = 1 << k
        index = m.algebra.index((op,))
        for d in m.names:
            table = m.action_table(op, d)
            if table is None:
                continue
            for i, o in zip(*np.nonzero(table[index])):
                x, y = m.basis_name(d, int(i)), m.basis_name(d + op, int(o))
                assert got[y] == got[x] + op // 2, (name, f"Sq{op} {x} has the term {y}")
                piece[root(y)] = root(x)
    lowest: dict[str, tuple[int, str]] = {}
    for d in sorted(m.names):
        for x in m.names[d]:
            lowest.setdefault(root(x), (d, x))
    assert all(got[x] == 0 for _, x in lowest.values())


# -- the long exact sequence of a two-cell complex -------------------------------------------------------------

def f2_basis(run, low: int) -> dict[tuple[int, int, int], list[tuple[object, int]]]:
    """(s, t, u) -> the F_2 basis tau^j g of Ext in weight u >= low (g a generator of weight u + j, j below its
    torsion order)."""
    out: dict[tuple[int, int, int], list] = {}
    for c in run.generators:
        top = c.torsion if c.torsion is not None else c.weight - low + 1
        for j in range(top):
            out.setdefault((c.s, c.t, c.weight - j), []).append((c, j))
    return out


def h_rank(run, basis: dict, op: str, source: tuple[int, int, int]) -> int:
    """The rank of h_i from Ext^{s,t,u} to Ext^{s+1, t + 2^i, u + w(h_i)}: h_i tau^j g = sum tau^(j+k) y over the
    printed terms tau^k y, each kept while j + k is below y's torsion order."""
    s, t, u = source
    target = (s + 1, t + (1 << int(op[1:])), u + H_WEIGHT[op])
    rows, cols = basis.get(source, []), basis.get(target, [])
    if not rows or not cols:
        return 0
    where = {(c.stem, c.s, c.weight, j): i for i, (c, j) in enumerate(cols)}
    matrix = np.zeros((len(rows), len(cols)), dtype=np.uint8)
    for r, (c, j) in enumerate(rows):
        terms = run.product(op, c)
        assert terms is not None, (op, c)
        for y, k in terms:
            if y.torsion is None or j + k < y.torsion:
                matrix[r, where[(y.stem, y.s, y.weight, j + k)]] ^= 1
    return rank(matrix)


@pytest.fixture(scope="module")
def sphere():
    """S_2's motivic Ext through stem 16, one row more than the complexes below, so that h_i out of their top row
    lands inside."""
    return nassau.resolve("S_2", stem=16, max_s=7, motivic=True, progress=False)


@pytest.mark.parametrize("name, op, cell", [("C2", "h0", 1), ("Ceta", "h1", 2), ("Cnu", "h2", 4),
                                            ("Csigma", "h3", 8)])
def test_two_cell_complexes_are_the_long_exact_sequence_of_the_sphere(sphere, name: str, op: str, cell: int) -> None:
    """0 -> Sigma^{n,w} M_2 -> H(Cx) -> M_2 -> 0 (the top cell at (n, w) = (2^i, w(h_i))) gives
    ... -> Ext^{s-1}(S)_{t-n,u-w} -h_i-> Ext^s(S)_{t,u} -> Ext^s(Cx)_{t,u} -> Ext^s(S)_{t-n,u-w} -h_i-> ...,
    so dim Ext^{s,t,u}(Cx) = coker h_i into (s, t, u) + ker h_i out of (s, t - n, u - w): checked in every
    trigrading of the complex's run through stem 16, s <= 6, the sphere's run giving both sides."""
    w = H_WEIGHT[op]
    run = nassau.resolve(name, stem=16, max_s=6, motivic=True, progress=False)
    weights = [c.weight for c in run.generators] + [c.weight for c in sphere.generators]
    low, high = min(weights) - 2, max(weights) + w + 1  # below every generator a tau-free tower only repeats
    ours, theirs = f2_basis(run, low - w), f2_basis(sphere, low - w)
    checked = 0
    for s in range(7):
        for t in range(s, 16 + s + 1):
            for u in range(low, high + 1):
                below = (s - 1, t - cell, u - w)
                coker = len(theirs.get((s, t, u), [])) - (h_rank(sphere, theirs, op, below) if s else 0)
                top = (s, t - cell, u - w)
                kernel = len(theirs.get(top, [])) - h_rank(sphere, theirs, op, top)
                assert len(ours.get((s, t, u), [])) == coker + kernel, (name, t - s, s, u)
                checked += coker + kernel > 0
    assert checked > 40


def generator_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("(")]


#: `nassau resolve Ceta --motivic --stem 10 --max-s 4`: every generator is tau-free, at these (stem, s, weight) (the
#: long exact sequence above gives them: through stem 10 it has no tau-torsion, so the number of generators of
#: weight u at (s, t) is dim Ext^{s,t,u} - dim Ext^{s,t,u+1}).
CETA = [(0, 0, 0), (0, 1, 0), (0, 2, 0), (0, 3, 0), (0, 4, 0), (2, 1, 1), (2, 2, 1), (2, 3, 1), (2, 4, 1),
        (3, 1, 2), (3, 2, 2), (5, 1, 3), (5, 2, 3), (5, 3, 3), (6, 2, 4), (7, 1, 4), (7, 2, 4), (7, 3, 4),
        (7, 4, 4), (8, 2, 5), (8, 3, 5), (9, 2, 5), (9, 3, 5), (9, 4, 5)]


def test_ceta_prints_its_known_generators() -> None:
    out = run_cli("resolve", "Ceta", "--motivic", "--stem", "10", "--max-s", "4", "--quiet")
    assert out.returncode == 0, out.stderr.decode()
    lines = generator_lines(out.stdout.decode())
    assert [tuple(int(x) for x in line[1:line.index(")")].split(",")) for line in lines] == CETA
    assert all(line.split()[3] == "tau-free" for line in lines)
    assert "h1 (3, 2, 2)" in lines[5] and "h2 (5, 2, 3)" in lines[5]  # on (2, 1, 1): h1 and h2 of the top cell


# -- every printed power of tau ---------------------------------------------------------------------------------

CLASS = r"\((\d+), (\d+), (\d+)\)"
TERM = re.compile(r"(?:tau(?:\^(\d+))? )?" + CLASS)


def printed_products(text: str):
    """(x, op, [(k, y)]) for every product printed: x and y as (stem, s, weight), k the power of tau."""
    for line in generator_lines(text):
        x = tuple(int(v) for v in re.match(CLASS, line).groups())
        for op, terms in re.findall(r"(h[0-3]) (.*?)(?=  h[0-3] |$)", line):
            found = [(1 if m.group(0).startswith("tau ") else int(m.group(1) or 0),
                      tuple(int(v) for v in m.groups()[1:])) for m in TERM.finditer(terms)]
            yield x, op, found


@pytest.mark.parametrize("args", [("S_2", "--stem", "12", "--max-s", "6"), ("S_2", "--stem", "20", "--max-s", "8"),
                                  ("Csigma", "--stem", "16", "--max-s", "6"), ("Cnu", "--stem", "12", "--max-s", "5")])
def test_every_printed_power_of_tau_is_the_weight_difference(args: tuple[str, ...]) -> None:
    """h_i x = sum tau^k y in weight w(x) + w(h_i), so k = w(y) - w(x) - w(h_i), with h0..h3 of weights 0, 1, 2, 4,
    for every printed term; and the h3 products through stem 12 are tau-free of tau (h3 (7, 1, 4), h0^k h3, ...)."""
    out = run_cli("resolve", *args, "--motivic", "--quiet")
    assert out.returncode == 0, out.stderr.decode()
    text = out.stdout.decode()
    seen = {op: 0 for op in H_WEIGHT}
    for x, op, terms in printed_products(text):
        for k, y in terms:
            assert y[0] == x[0] + (1 << int(op[1:])) - 1 and y[1] == x[1] + 1, (x, op, y)
            assert k == y[2] - x[2] - H_WEIGHT[op], (x, op, k, y)
            seen[op] += 1
    assert all(seen.values()), seen
    if args[:3] == ("S_2", "--stem", "12"):
        assert "h3 tau" not in text
        assert "h3 (7, 1, 4)" in generator_lines(text)[0]


# -- --max-weight ---------------------------------------------------------------------------------------------

def test_max_weight_keeps_the_generators_of_that_weight(tmp_path: Path, rng: np.random.Generator) -> None:
    """--max-weight W lists exactly the generators of weight <= W of the run without it (W = 3 keeps (3, 3, 3),
    h0^2 h2 = tau h1^3's h1^3; and a random W), in text and JSON."""
    args = ("resolve", "S_2", "--motivic", "--stem", "10", "--max-s", "5", "--quiet")
    every = run_cli(*args, "--json", str(tmp_path / "all.json"))
    assert every.returncode == 0
    whole = json.loads((tmp_path / "all.json").read_text())
    for w in (3, int(rng.integers(0, 7))):
        out = run_cli(*args, "--max-weight", str(w), "--json", str(tmp_path / f"{w}.json"))
        assert out.returncode == 0
        lines = generator_lines(out.stdout.decode())
        assert lines == [line for line in generator_lines(every.stdout.decode())
                         if int(line[1:line.index(")")].split(",")[2]) <= w]
        data = json.loads((tmp_path / f"{w}.json").read_text())
        assert data["generators"] == [g for g in whole["generators"] if g["weight"] <= w]
        assert any(g["weight"] == w for g in data["generators"])
        if w == 3:
            assert any(line.startswith("(3, 3, 3) ") for line in lines)
