"""Products and Massey products in Mod_{C lambda^2}: the reference's goldens, the E3 page, the batched composites and
A-terms of the product and null-homotopy lifts against their one-at-a-time twins, the Ext parts against E2, the
unit's lift, bad input."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from algebra.module.loader import load_module
from fp import to_bool
from fp.packed import stack
from nassau.engine.region import Region
from nassau.engine.resolve import resolve
from nassau.lifting.chain_map import ChainMap
from nassau.products.ext_class import ExtClass
from nassau.products.filtration_one import h_matrix
from nassau.secondary.homotopy import secondary_homotopy
from nassau.secondary.lift import SecondaryLift
from nassau.secondary.massey import (
    LambdaClass,
    bracket_lift,
    parse_lambda_class,
    secondary_massey,
)
from nassau.secondary.product import SecondaryExt, secondary_products
from tests.helpers import assert_one_line_error, golden, run_cli

MASSEY = {"h_2-h_3": ("h_2=3,1,[1]", "h_3=7,1,[1]"), "3h_2-h_3": ("h_2=3,1,[1]+λh_0h_2=[1]", "h_3=7,1,[1]"),
          "P": ("h_3=7,1,[1]", "h_0^4=0,4,[1]"), "h_4": ("h_3=7,1,[1]", "λh_0h_3=7,1,[1]")}


def secondary_ext(module: str, algorithm: str = "standard", stem: int = 30, max_s: int = 7, unit: tuple | None = None,
                  threads: int = 1) -> SecondaryExt:
    """M resolved and lifted over (stem, max_s); the sphere beside it over `unit` (stem, max_s) unless M is S_2."""
    region = Region(max_s=max_s, min_degree=0, max_stem=stem)
    res = resolve(load_module(module), region, algorithm, threads)
    h = secondary_homotopy(res, region, threads)
    if unit is None:
        return SecondaryExt(h, region, h, region, threads)
    unit_region = Region(max_s=unit[1], min_degree=0, max_stem=unit[0])
    k = resolve(load_module("S_2"), unit_region, algorithm, threads)
    hk = secondary_homotopy(k, unit_region, threads)
    return SecondaryExt(h, region, hk, unit_region, threads)


@pytest.fixture(scope="module")
def sphere() -> SecondaryExt:
    return secondary_ext("S_2")


def product_text(ext: SecondaryExt, name: str, x: ExtClass) -> str:
    return "".join(line.text(name) + "\n" for line in secondary_products(ext, x, name))


def massey_text(ext: SecondaryExt, a: str, b: str) -> str:
    a_class, b_class = parse_lambda_class(a), parse_lambda_class(b)
    return "".join(line.text(a_class.display, b_class.display) + "\n"
                   for line in secondary_massey(ext, a_class, b_class))


def test_product_golden_h0(sphere: SecondaryExt) -> None:
    assert product_text(sphere, "h_0", ExtClass(0, 1, (1,))) == golden("secondary_product-h_0-S_2")


def test_product_golden_v1_over_c2() -> None:
    """C2 through stem 30, s <= 7; the sphere through stem 28, s <= 6 (the reference's unit region)."""
    ext = secondary_ext("C2", unit=(28, 6))
    assert product_text(ext, "v_1", ExtClass(2, 1, (1,))) == golden("secondary_product-v_1-C2")


def test_product_golden_with_nassau_quasi_inverses() -> None:
    """The lambda parts read the quasi-inverses: Nassau's signature-by-signature preimages are the reference's
    replayed Nassau quasi-inverses (six entries differ from the standard golden)."""
    ext = secondary_ext("S_2", "nassau")
    text = product_text(ext, "h_0", ExtClass(0, 1, (1,)))
    assert text == golden("secondary_product-h_0-S_2-nassau") != golden("secondary_product-h_0-S_2")


@pytest.mark.parametrize("name", MASSEY)
def test_massey_goldens(sphere: SecondaryExt, name: str) -> None:
    assert massey_text(sphere, *MASSEY[name]) == golden(f"secondary_massey-{name}-S_2")


def test_cli_prints_the_goldens_and_json(tmp_path: Path) -> None:
    out = run_cli("secondary", "S_2", "--stem", "30", "--max-s", "7", "--quiet", "--product", "h_0=0,1,[1]",
                  "--json", str(tmp_path / "p.json"))
    assert out.returncode == 0 and out.stdout.decode() == golden("secondary_product-h_0-S_2")
    data = json.loads((tmp_path / "p.json").read_text())
    assert data["algorithm"] == "standard" and data["products"][0]["class"] == {"n": 0, "s": 1, "vector": [1]}
    rows = data["products"][0]["rows"]
    assert len(rows) == 37 and {"y": {"n": 15, "s": 1, "vector": [1]}, "lambda_y": True, "product": [1],
                                "lambda": None} in rows
    out = run_cli("secondary", "S_2", "--stem", "30", "--max-s", "7", "--quiet", "--massey", "h_3=7,1,[1]",
                  "λh_0h_3=7,1,[1]", "--json", str(tmp_path / "m.json"))
    assert out.returncode == 0 and out.stdout.decode() == golden("secondary_massey-h_4-S_2")
    massey = json.loads((tmp_path / "m.json").read_text())["massey"]
    assert massey["b"] == {"n": 7, "s": 1, "ext_name": "", "ext": [], "lambda_name": "h_0h_3", "lambda": [1]}
    assert massey["rows"][0] == {"c": {"n": 0, "s": 0, "ext": [0], "lambda": [1]}, "bidegree": [15, 1], "ext": [0],
                                 "lambda": [1]}


@pytest.mark.parametrize("args,needle", [
    (["--product", "h_4=15,1,[1]"], "supports a nonzero d2"),
    (["--product", "x=29,1,[1]"], "outside the computed range"),
    (["--product", "h_0=0,1,[1,1]"], "needs a vector of length 1"),
    (["--massey", "h_0=0,1,[1]", "h_0=0,1,[1]"], "not zero in Ext"),
    (["--massey", "h_3=7,1,[1]", "h_3=7,1,[1]"], "not zero in Ext"),
    (["--massey", "h_3=7,1,[1]+λh_0h_3=[1,1]", "h_0=0,1,[1]"], "needs a vector of length 1"),
    (["--massey", "h_3", "h_0=0,1,[1]"], "cannot read the class"),
])
def test_bad_input_is_one_line_and_status_2(args: list[str], needle: str) -> None:
    out = run_cli("secondary", "S_2", "--stem", "20", "--max-s", "6", "--quiet", *args)
    assert_one_line_error(out, needle)


def test_odd_primes_are_refused() -> None:
    out = run_cli("secondary", "S_3", "--stem", "10", "--product", "a_0=0,1,[1]")
    assert out.returncode == 2 and "p = 3" in out.stderr.decode()


def test_lambda_classes_parse() -> None:
    assert parse_lambda_class("h_2=3,1,[1]") == LambdaClass(3, 1, "h_2", (1,), "", ())
    assert parse_lambda_class(" h_2 = 3,1,[1] + λ h_0h_2=[1]") == LambdaClass(3, 1, "h_2", (1,), "h_0h_2", (1,))
    assert parse_lambda_class("lambda h_0h_3=7,1,[1]") == LambdaClass(7, 1, "", (), "h_0h_3", (1,))
    assert parse_lambda_class("λh_0h_3=7,1,[1]").display == "λh_0h_3"
    assert parse_lambda_class("h_2=3,1,[1]+λh_0h_2=[1]").display == "[h_2] + λh_0h_2"


def test_e3_page(sphere: SecondaryExt) -> None:
    """h4 supports d2 (no cycles at (15, 1)), h0 h3^2 is hit (a boundary at (14, 3)); x_(18, 4, 1) supports d2 and
    the cycles there are x_(18, 4, 0); preimages of d2 are preimages."""
    page = sphere.module_page
    h4 = page.page(15, 1)
    assert h4.complement_pivots() == [0] and not len(h4.subspace_gens())
    hit = page.page(14, 3)
    assert hit.quotient.pivots.tolist() == [0] and hit.reduce_by_quotient(np.array([[1]], np.uint8)).tolist() == [[0]]
    f0 = page.page(18, 4)
    assert f0.subspace_gens().tolist() == [[1, 0]] and f0.complement_pivots() == [1]
    checked = 0
    for (n, s), d2 in page.d2.items():
        for row in d2[d2.any(axis=1)]:
            pre = page.d2_preimage(n, s, row[None, :])
            assert np.array_equal((pre.astype(np.int64) @ d2) % 2, row[None, :])
            checked += 1
    assert checked >= 4


def test_ext_parts_are_the_e2_products(sphere: SecondaryExt) -> None:
    """[x] [y] = [x y] + ...: the Ext parts (and the lambda y lines) are the products of E2, here by h1 and h2."""
    res = sphere.module.source
    for i in (1, 2):
        x = ExtClass((1 << i) - 1, 1, (1,))
        lines = secondary_products(sphere, x, f"h_{i}")
        assert len(lines) > 20
        for line in lines:
            y = np.array(line.y, dtype=np.int64)
            assert list(line.ext) == ((y @ h_matrix(res, i, *line.b)) % 2).tolist(), line


def test_lifts_over_a_smaller_region_than_the_resolution() -> None:
    """Lines are read where the secondary lifts reach, not wherever the resolution does."""
    region = Region(max_s=6, min_degree=0, max_stem=20)
    res = resolve(load_module("S_2"), Region(max_s=7, min_degree=0, max_stem=30), "standard", 1)
    h = secondary_homotopy(res, region, 1)
    inner = SecondaryExt(h, region, h, region)
    fresh = secondary_ext("S_2", stem=20, max_s=6)
    x = ExtClass(0, 1, (1,))
    assert product_text(inner, "h_0", x) == product_text(fresh, "h_0", x)
    assert massey_text(inner, *MASSEY["P"]) == massey_text(fresh, *MASSEY["P"])


def test_threads_do_not_change_products_or_brackets() -> None:
    one, two = secondary_ext("S_2", stem=24, max_s=6), secondary_ext("S_2", stem=24, max_s=6, threads=2)
    x = ExtClass(1, 1, (1,))
    assert product_text(one, "h_1", x) == product_text(two, "h_1", x)
    assert massey_text(one, *MASSEY["h_2-h_3"]) == massey_text(two, *MASSEY["h_2-h_3"])


def _slow_a_terms(lift: SecondaryLift, s: int, degree: int, vector: np.ndarray) -> np.ndarray:
    """sum A(a, C_s(y)) over the terms a y of a vector of F_s in `degree`, one A(r, x) at a time."""
    fs, low = lift.source.free(s), lift.target.free(s - lift.s_shift)
    out_deg = degree - lift.st - 1
    off = low.offsets(out_deg)
    out = np.zeros(int(off[-1]), dtype=np.uint8)
    gens, words = fs.basis_words(degree)
    for col in np.nonzero(to_bool(vector[None, :], len(gens))[0])[0]:
        y = int(gens[col])
        if fs.gen_degrees[y] - lift.st < lift.target.min_degree:
            continue
        r = lift.source.algebra.unpack(int(words[col]))
        for z, element in lift.composites.twin(s, y).items():
            v = lift.pair.a_multiply(r, element)
            out[off[z]:off[z] + len(v)] ^= v
    return out


def _compare_with_twins(lift: SecondaryLift, max_t: int) -> int:
    """Composites (Z/4 and Y parts) of every generator they were used on, and the A-terms of the differentials of
    every lifted generator, batched against one at a time; returns how many composites were compared."""
    checked = 0
    for s in sorted(lift.lifted):
        low = lift.target.free(s - lift.s_shift)
        fs = lift.source.free(s)
        for t in range(lift.bottom(s), min(lift.lifted[s], max_t) + 1):
            if not lift.is_lifted(s + 1, t + 1):
                continue
            gens = range(fs.gens_below(t), fs.gens_below(t + 1))
            for g in gens:
                fast, slow = lift.composites(s, g), lift.composites.twin(s, g)
                deg = t - lift.st
                twos = np.zeros(low.dimension(deg), dtype=bool)
                ys: dict = {}
                for z, element in slow.items():
                    o = low.offsets(deg)[z]
                    twos[o:o + len(element.z4)] = element.twos.astype(bool)
                    for key, v in element.ys.items():
                        d_key = deg + 1 - (1 << key[0]) - (1 << key[1])
                        row = ys.setdefault(key, np.zeros(low.dimension(d_key), dtype=bool))
                        o = low.offsets(d_key)[z]
                        row[o:o + len(v)] ^= v.astype(bool)
                assert np.array_equal(to_bool(fast.twos[None, :], len(twos))[0], twos), (s, g)
                assert {k for k, v in ys.items() if v.any()} == set(fast.ys), (s, g)
                for key, row in ys.items():
                    if row.any():
                        assert np.array_equal(to_bool(fast.ys[key][None, :], len(row))[0], row), (s, g, key)
                checked += 1
            if s > lift.s_shift and len(gens):
                dx = stack([lift.source.differential(s).output(g)[0] for g in gens])
                ngens = lift.target.free(s - lift.s_shift - 1).gens_below(t - lift.st)
                fast = lift.act(s - 1, t, dx, ngens)
                for row, v in enumerate(dx):
                    want = _slow_a_terms(lift, s - 1, t, v)
                    assert np.array_equal(to_bool(fast[row:row + 1], len(want))[0], want.astype(bool)), (s, t)
    return checked


def test_product_lift_batches_equal_the_twins() -> None:
    """The lift of v_1 on C2 (coefficient 3 on sigma(c) sigma(d), maps of shift (1, 3)) through stem 30."""
    ext = secondary_ext("C2", unit=(28, 6))
    c = ChainMap.from_class(ext.module.source, ext.unit.source, 2, 1, np.array([1], np.uint8), ext.module_region, "v1")
    ext.lift([c])
    assert _compare_with_twins(ext.secondary_map(c), 40) > 40


def test_null_homotopy_lift_batches_equal_the_twins(sphere: SecondaryExt) -> None:
    """The lift of K for <h3, lambda h0 h3, ->: three composites (one with coefficient 3) over a K seeded by
    z = h4 on its first stage."""
    lift = bracket_lift(sphere, *map(parse_lambda_class, MASSEY["h_4"]))
    assert lift.k.hom_k(lift.k.s_shift, 15 + 1).tolist() == [[1]]
    assert _compare_with_twins(lift, 40) > 40


@pytest.mark.slow
def test_ext_parts_are_the_e2_products_through_stem_45() -> None:
    """Over a larger range, on two threads: the Ext parts of products by h0, h1, h2 and c0 are E2's products (read
    off chain maps lifted by nassau.products.ext_algebra, an independent path for c0)."""
    from nassau.products.ext_algebra import ExtAlgebra

    ext = secondary_ext("S_2", stem=45, max_s=12, threads=2)
    res = ext.module.source
    alg = ExtAlgebra(res, res, threads=2)
    for name, x in [("h_0", ExtClass(0, 1, (1,))), ("h_1", ExtClass(1, 1, (1,))), ("h_2", ExtClass(3, 1, (1,))),
                    ("c_0", ExtClass(8, 3, (1,)))]:
        lines = secondary_products(ext, x, name)
        matrices = alg.products(x, sorted({line.b for line in lines}), lifted=True)
        assert len(lines) > 50
        for line in lines:
            y = np.array(line.y, dtype=np.int64)
            assert list(line.ext) == ((y @ matrices[line.b]) % 2).tolist(), (name, line)


def test_the_secondary_lift_of_the_unit_is_zero(sphere: SecondaryExt) -> None:
    """The unit's chain map c = 1 commutes with d on the nose, and its lift witnesses 3 sigma(d) sigma(1) +
    sigma(1) sigma(d) = 4 sigma(d) = 0 in Z/4: every composite is zero (no twos, no Y part), so the homotopy is zero
    (and [1] [y] would have no lambda part). A coefficient 1 in place of 3 leaves 2 sigma(d) (twos = d), which no d2 test sees:
    d2's lift has one composite, with coefficient 1."""
    c = ChainMap.from_class(sphere.module.source, sphere.unit.source, 0, 0, np.array([1], np.uint8),
                            sphere.module_region, "1")
    sphere.lift([c])
    lift = sphere.secondary_map(c)
    checked = 0
    for s in sorted(lift.lifted):
        fs = lift.source.free(s)
        for t in range(lift.bottom(s), lift.lifted[s] + 1):
            for g in range(fs.gens_below(t), fs.gens_below(t + 1)):
                composite = lift.composites(s, g)
                assert not composite.twos.any() and not any(v.any() for v in composite.ys.values()), (s, g)
                checked += 1
            assert not lift.images(s, t).any(), (s, t)
    assert checked > 50
