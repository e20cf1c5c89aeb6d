"""The Adams d2 from the secondary Steenrod algebra: the pair algebra's formulas, goldens, and identities."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from algebra.milnor.basis import MilnorBasis, format_element
from algebra.milnor.ppart import pack
from algebra.module.loader import load_module
from algebra.secondary.pair_algebra import (
    PairAlgebra,
    binomials_mod4,
    z4_product,
    z4_product_all,
    z4_workspace,
)
from nassau.engine.region import Region
from nassau.engine.resolve import resolve
from nassau.products.filtration_one import h_matrix
from nassau.secondary.homotopy import SecondaryError, d2_lines, d2_matrix, secondary_homotopy
from tests.helpers import assert_one_line_error, golden, run_cli


@pytest.fixture(scope="module")
def pair() -> PairAlgebra:
    basis = MilnorBasis()
    basis.extend(40)
    return PairAlgebra(basis)


def _names(basis: MilnorBasis, d: int, vec: np.ndarray) -> dict[str, int]:
    return {format_element(basis.element(d, int(i))): int(vec[i]) for i in np.nonzero(vec)[0]}


@pytest.mark.parametrize("r,s,z4,ys", [
    ((1,), (1,), {"P(2)": 2}, {(0, 1): ["1"]}),
    ((2,), (2,), {"P(4)": 2, "P(1, 1)": 1}, {}),
    ((1,), (2,), {"P(3)": 3}, {(0, 1): ["P(1)"]}),
    ((2,), (1,), {"P(3)": 3, "P(0, 1)": 1}, {(0, 1): ["P(1)"]}),
    ((0, 1), (1,), {"P(1, 1)": 1}, {(0, 2): ["1"]}),
    ((1,), (0, 1), {"P(1, 1)": 1}, {}),
    ((4,), (4,), {"P(8)": 2, "P(5, 1)": 2, "P(2, 2)": 1}, {(0, 1): ["P(3, 1)"]}),
    ((2, 1), (1,), {"P(3, 1)": 3, "P(0, 2)": 2}, {(0, 1): ["P(1, 1)"], (0, 2): ["P(2)"], (1, 2): ["P(1)"]}),
])
def test_sigma_products(pair: PairAlgebra, r: tuple, s: tuple, z4: dict, ys: dict) -> None:
    """REFERENCE-SECONDARY 2.2's table."""
    e = pair.sigma_product(r, s)
    assert _names(pair.basis, e.degree, e.z4) == z4
    got = {key: sorted(_names(pair.basis, e.degree + 1 - 2**key[0] - 2**key[1], v))
           for key, v in e.ys.items() if v.any()}
    assert got == {key: sorted(v) for key, v in ys.items()}


@pytest.mark.parametrize("r,k,l,value", [
    ((1,), 0, 1, ["P(2)"]), ((1,), 1, 2, []), ((0, 1), 0, 1, ["P(1, 1)"]), ((0, 2), 1, 3, ["P(0, 0, 2)"]),
    ((1, 2), 0, 1, ["P(2, 2)"]), ((2,), 0, 1, ["P(3)", "P(0, 1)"]), ((3,), 0, 1, ["P(1, 1)"]),
    ((2,), 1, 2, ["P(0, 2)"]), ((4,), 0, 2, []), ((0, 1), 0, 2, ["P(0, 2)"]),
])
def test_a_y(pair: PairAlgebra, r: tuple, k: int, l: int, value: list) -> None:
    """REFERENCE-SECONDARY 2.3's values of A(Sq R, Y_{k,l})."""
    d = sum(x * (2 ** (i + 1) - 1) for i, x in enumerate(r)) + 2**k + 2**l - 2
    assert sorted(_names(pair.basis, d, pair.a_y(r, k, l))) == sorted(value)


def test_a_of_a_square_is_zero(pair: PairAlgebra) -> None:
    """A(Sq1, sigma Sq1 sigma Sq1) = Sq2 + Sq2 = 0."""
    assert not pair.a_multiply((1,), pair.sigma_product((1,), (1,))).any()


def test_pruned_z4_products_are_every_matrix(rng: np.random.Generator) -> None:
    """z4_product (cut at two carries) = z4_product_all (every Milnor matrix) on fresh random pairs up to degree 100,
    and it lists what it makes nonzero; it reaches under a quarter of the matrices (fails if the cut is loosened). The
    pairs meet coefficients 1, 2 and 3, so the pruned path's coefficient rule (from carries and adjacent bits, no
    binomials) is checked on each."""
    basis = MilnorBasis()
    basis.extend(201)
    binom, ws = binomials_mod4(), z4_workspace()
    reached = {"cut": 0, "all": 0}
    coefficients: set[int] = set()
    for _ in range(1500):
        dr, ds = (int(d) for d in rng.integers(0, 101, 2))
        r = int(rng.integers(basis.dimension(dr)))
        s = int(rng.integers(basis.dimension(ds)))
        rw, sw = (np.uint64(pack(basis.element(d, i))) for d, i in ((dr, r), (ds, s)))
        d = dr + ds
        cut, every = np.zeros(basis.dimension(d), dtype=np.int8), np.zeros(basis.dimension(d), dtype=np.int8)
        hits = np.zeros(basis.dimension(d) + 1, dtype=np.int64)
        reached["cut"] += z4_product(rw, sw, d, basis.rank_g, basis.index_map, basis.index_map_offset, cut, ws,
                                     hits)
        reached["all"] += z4_product_all(rw, sw, d, basis.rank_g, basis.index_map, basis.index_map_offset, binom,
                                         every, ws)
        assert np.array_equal(cut, every), (basis.element(dr, r), basis.element(ds, s))
        coefficients.update(np.unique(cut).tolist())
        assert hits[0] >= 0 and set(np.nonzero(cut)[0]) <= set(hits[1:hits[0] + 1].tolist())
        if np.count_nonzero(cut) > 1:  # a list too short says so: the caller scans the degree instead
            short = np.zeros(2, dtype=np.int64)
            z4_product(rw, sw, d, basis.rank_g, basis.index_map, basis.index_map_offset, np.zeros_like(cut), ws,
                       short)
            assert short[0] == -1
    assert reached["cut"] < reached["all"] / 4, reached
    assert coefficients == {0, 1, 2, 3}


def lifted(module: str, algorithm: str = "standard", stem: int = 30, max_s: int = 7, threads: int = 1):
    m = load_module(module)
    region = Region(max_s=max_s, min_degree=m.min_degree, max_stem=stem)
    res = resolve(m, region, algorithm, threads)
    return secondary_homotopy(res, region, threads), region


@pytest.mark.parametrize("name,module,algorithm", [
    ("secondary-S_2", "S_2", "standard"), ("secondary-C2", "C2", "standard"),
    ("secondary-C2-nassau", "C2", "nassau"), ("secondary-tmf", "A-mod-Sq1-Sq2-Sq4", "standard"),
])
def test_goldens(name: str, module: str, algorithm: str) -> None:
    h, region = lifted(module, algorithm)
    assert d2_lines(h, region) == golden(name)


def test_cli_prints_the_golden(tmp_path: Path) -> None:
    out = run_cli("secondary", "S_2", "--stem", "30", "--max-s", "7", "--quiet", "--json", str(tmp_path / "d.json"))
    assert out.returncode == 0 and out.stdout.decode() == golden("secondary-S_2")
    data = json.loads((tmp_path / "d.json").read_text())
    assert {"source": [15, 1, 0], "target": [14, 3], "vector": [1]} in data["d2"] and len(data["d2"]) == 18


@pytest.fixture(scope="module")
def sphere():
    return lifted("S_2", "standard", stem=40, max_s=9)


NAMED = {(15, 1): (14, 3), (17, 4): (16, 6), (23, 7): (22, 9), (25, 8): (24, 10), (26, 7): (25, 9),
         (29, 7): (28, 9), (31, 1): (30, 3)}


def test_known_differentials(sphere) -> None:
    """Isaksen's tables (REFERENCE-SECONDARY 8): d2 h4 = h0 h3^2, d2 e0 = h1^2 d0, d2 i = h0 Pd0, d2 Pe0 = h1^2 Pd0,
    d2 j = h0 Pe0, d2 k = h0 d0^2, d2 h5 = h0 h4^2; and d2 = 0 on h0..h3, c0, h1 h4, d0."""
    h, region = sphere
    for (n, s), _ in NAMED.items():
        if region.contains(s + 2, n + s + 1):
            assert d2_matrix(h, n, s).tolist() == [[1]], (n, s)
    for n, s in [(0, 1), (1, 1), (3, 1), (7, 1), (8, 3), (16, 2), (14, 4)]:
        assert not d2_matrix(h, n, s).any(), (n, s)


def test_d2_squares_to_zero_and_is_a_derivation(sphere) -> None:
    h, region = sphere
    res = h.source
    dims = {(t - s, s): k for (s, t), k in res.dims().items() if k}
    composed = derivations = 0
    for (n, s) in sorted(dims):
        if not region.contains(s + 4, n + s + 2):
            continue
        d = d2_matrix(h, n, s).astype(np.int64)
        if dims.get((n - 1, s + 2)) and dims.get((n - 2, s + 4)):
            assert not ((d @ d2_matrix(h, n - 1, s + 2)) % 2).any(), (n, s)
            composed += 1
        for i in range(3):
            shift = (1 << i) - 1
            if not (dims.get((n + shift, s + 1)) and region.contains(s + 3, n + shift + s + 2)):
                continue
            left = (h_matrix(res, i, n, s).astype(np.int64) @ d2_matrix(h, n + shift, s + 1)) % 2
            right = (d @ h_matrix(res, i, n - 1, s + 2)) % 2 if dims.get((n - 1, s + 2)) else np.zeros_like(left)
            assert np.array_equal(left, right), (i, n, s)
            derivations += 1
    assert composed > 3 and derivations > 50


def test_standard_and_nassau_give_the_same_d2() -> None:
    a, region = lifted("S_2", "standard", stem=30, max_s=8)
    b, _ = lifted("S_2", "nassau", stem=30, max_s=8)
    assert d2_lines(a, region) == d2_lines(b, region)


def test_threads_do_not_change_d2() -> None:
    a, region = lifted("C2", "standard", stem=30, max_s=8, threads=1)
    b, _ = lifted("C2", "standard", stem=30, max_s=8, threads=2)
    assert d2_lines(a, region) == d2_lines(b, region)


def test_obstruction_at_s3_is_reported(tmp_path: Path) -> None:
    """The reference's cofib_h4 (x0, x16 with Sq16 x0 = x16) fails to lift at (n, s) = (14, 3)."""
    path = tmp_path / "cofib_h4.json"
    path.write_text(json.dumps({"p": 2, "type": "finite dimensional module", "gens": {"x0": 0, "x16": 16},
                                "actions": ["Sq16 x0 = x16"]}))
    m = load_module(str(path))
    region = Region(max_s=5, min_degree=0, max_stem=20)
    with pytest.raises(SecondaryError, match=r"failed to lift at \(n=14, s=3\)"):
        secondary_homotopy(resolve(m, region, "standard", 1), region)


@pytest.mark.parametrize("module,needle", [("S_3", "p = 3"), ("ko", "over A(1)")])
def test_bad_modules(module: str, needle: str) -> None:
    out = run_cli("secondary", module, "--stem", "10")
    assert_one_line_error(out, needle)


def test_batched_composites_and_a_terms_equal_the_one_at_a_time_twins() -> None:
    """The compiled composites (Z/4 and Y parts) and A-term batches against sigma products and A(r, x) made one at
    a time, on every generator of S_2 and C2 through stem 24."""
    from fp import to_bool

    checked = 0
    for module in ("S_2", "C2"):
        m = load_module(module)
        region = Region(max_s=7, min_degree=0, max_stem=24)
        res = resolve(m, region, "standard", 1)
        h = secondary_homotopy(res, region)
        basis = res.algebra
        for s in range(2, 8):
            low = res.free(s - 2)
            for g in range(res.free(s).num_gens):
                fast, slow = h.composites(s, g), h.composites.twin(s, g)
                t = int(res.free(s).gen_degrees[g])
                twos = np.zeros(low.dimension(t), dtype=np.uint8)
                ys: dict = {}
                off = low.offsets(t)
                for target, elem in slow.items():
                    twos[off[target]:off[target] + len(elem.z4)] = elem.twos
                    for key, v in elem.ys.items():
                        d_key = t + 1 - (1 << key[0]) - (1 << key[1])
                        row = ys.setdefault(key, np.zeros(low.dimension(d_key), dtype=np.uint8))
                        o = low.offsets(d_key)[target]
                        row[o:o + len(v)] ^= v
                assert (np.array_equal(to_bool(fast.twos[None, :], len(twos))[0], twos.astype(bool))
                        if len(twos) else True)
                assert {k: v for k, v in ys.items() if v.any()}.keys() == fast.ys.keys()
                for key, row in ys.items():
                    if row.any():
                        assert np.array_equal(to_bool(fast.ys[key][None, :], len(row))[0], row.astype(bool))
                checked += 1
            if s < 3:
                continue
            for t in range(s, 24 + s + 1):
                if not res.new_gens.get((s, t)):
                    continue
                width = res.free(s - 3).gens_below(t - 1)
                fast = h.intermediate(s, t, width)
                off = res.free(s - 3).offsets(t - 1, width)
                d = res.differential(s)
                for row, g in enumerate(range(res.free(s).gens_below(t), res.free(s).gens_below(t + 1))):
                    want = np.zeros(int(off[-1]), dtype=np.uint8)
                    for k in range(int(d.term_start[g]), int(d.term_start[g + 1])):
                        r = basis.unpack(int(d.term_s[k]))
                        for target, x in h.composites.twin(s - 1, int(d.term_gen[k])).items():
                            v = h.pair.a_multiply(r, x)
                            want[off[target]:off[target] + len(v)] ^= v
                    assert np.array_equal(to_bool(fast[row:row + 1], len(want))[0], want.astype(bool)), (module, s, t)
    assert checked > 100


def test_y_products_share_their_tables_and_a_terms_are_batched(monkeypatch: pytest.MonkeyPatch) -> None:
    """Structural, on the d2 lift of S_2 through stem 30: the Y-part products of a run of rows with one term list
    share one-term lists (5134 lists for 7161 products here; one list per product before), and the A-terms of a
    degree are a handful of row groups, not one per (generator, key) part (391 groups for 76 calls; 1159 before)."""
    from algebra.free import batch_plan
    from algebra.secondary import y_parts
    from nassau.secondary import lift as secondary_lift

    seen = {"lists": 0, "products": 0, "groups": 0, "calls": 0}
    y_products, rows, a_terms = (y_parts.y_products, batch_plan.BatchPlan.rows,
                                 secondary_lift.SecondaryLift._a_terms)

    def counted_y(*args):
        out = y_products(*args)
        seen["lists"] += len(out[4])
        seen["products"] += len(out[0])
        return out

    def counted_rows(self, *args):
        seen["groups"] += 1
        return rows(self, *args)

    def counted_a_terms(self, *args):
        seen["calls"] += 1
        return a_terms(self, *args)

    monkeypatch.setattr(y_parts, "y_products", counted_y)
    monkeypatch.setattr(batch_plan.BatchPlan, "rows", counted_rows)
    monkeypatch.setattr(secondary_lift.SecondaryLift, "_a_terms", counted_a_terms)
    region = Region(max_s=10, min_degree=0, max_stem=30)
    secondary_homotopy(resolve(load_module("S_2"), region, "standard", 1), region)
    assert seen["products"] > 5000 and seen["lists"] < 0.85 * seen["products"], seen
    assert seen["calls"] > 50 and seen["groups"] < 10 * seen["calls"], seen


def test_charts_draw_d2_and_the_e3_page(tmp_path: Path) -> None:
    """--d2 puts the d2 lines (blue as on the page, the reference's `d2` class) on SVG, SeqSee and JSON; --page 3
    prints E3: h4, e0, f0's class and h1 e0 support d2, h0 h3^2, h1^2 d0, h0^2 e0 and h1^3 d0 are hit
    (n <= 30, s <= 7)."""
    import jsonschema

    from charts.style import D2_COLOUR
    from charts.text import parse_graded_dimension_string

    e2 = run_cli("resolve", "S_2", "--stem", "30", "--max-s", "7", "--quiet", "--d2", "--svg", str(tmp_path / "a.svg"),
                 "--seqsee", str(tmp_path / "a.json"), "--json", str(tmp_path / "c.json"))
    assert e2.returncode == 0, e2.stderr
    svg = (tmp_path / "a.svg").read_text()
    group = svg.split('<g class="d2">')[1].split("</g>")[0]
    assert group.count("<line") == 4 and f".d2 {{ stroke: {D2_COLOUR};" in svg
    seqsee = json.loads((tmp_path / "a.json").read_text())
    schema = json.loads((Path(__file__).parent / "data" / "seqsee" / "input_schema.json").read_text())
    jsonschema.Draft7Validator(schema).validate(seqsee)
    assert sum("d2" in e["attributes"] for e in seqsee["edges"]) == 4
    assert {"source": [15, 1, 0], "target": [14, 3, 0]} in json.loads((tmp_path / "c.json").read_text())["d2"]
    e3 = run_cli("resolve", "S_2", "--stem", "30", "--max-s", "7", "--page", "3")
    _, dims2 = parse_graded_dimension_string(e2.stdout.decode(), 0)
    _, dims3 = parse_graded_dimension_string(e3.stdout.decode(), 0)
    # the summary says what it counts: E3's classes are not generators of the resolution
    assert e3.stderr.decode().startswith(f"S_2: {sum(dims3.values())} classes on E3 (of {sum(dims2.values())} "
                                         "generators on E2) through stem 30, s <= 7")
    # Here every d2 is one entry, from distinct sources to distinct targets: each costs its source and target one.
    expected = dict(dims2)
    for b in [(15, 1), (14, 3), (17, 4), (16, 6), (18, 4), (17, 6), (18, 5), (17, 7)]:
        expected[b] -= 1
    assert dims3 == {b: d for b, d in expected.items() if d}


def test_the_e3_page_draws_e2_beside_it_and_every_file_names_its_page(tmp_path: Path) -> None:
    """The README's `--d2 --page 3 --html`: the page holds E2 (with the d2 lines, hence their checkbox and the
    switch) and E3, opening on E3; the SVG and JSON of page 3 are E3's and say so; a terminal's chart is headed by
    the page, piped output is E3's rows alone; `chart SAVE_DIR --page 3` writes the same page."""
    from charts.text import parse_graded_dimension_string

    html, svg, js = (tmp_path / f"e3.{ext}" for ext in ("html", "svg", "json"))
    run = run_cli("resolve", "S_2", "--stem", "16", "--max-s", "5", "--d2", "--page", "3", "--quiet",
                  "--html", str(html), "--svg", str(svg), "--json", str(js), "--save-dir", str(tmp_path / "run"))
    assert run.returncode == 0, run.stderr
    data = json.loads(html.read_text().split('id="chart-data">')[1].split("</script>")[0])
    assert [p["name"] for p in data["pages"]] == ["E2", "E3"] and data["start"] == 1
    assert data["pages"][0]["d2"] and "d2" not in data["pages"][1]
    assert "<title>E2 and E3 charts of S_2 (nassau), n &lt;= 16, s &lt;= 5</title>" in html.read_text()
    assert "<title>E3 chart of S_2 (p = 2, nassau), n &lt;= 16, s &lt;= 5</title>" in svg.read_text()
    assert json.loads(js.read_text())["page"] == "E3"
    _, dims3 = parse_graded_dimension_string(run.stdout.decode(), 0)
    assert (15, 1) not in dims3 and (14, 3) not in dims3  # d2 h4 = h0 h3^2
    headed = run_cli("chart", str(tmp_path / "run"), "--page", "3", "--axes", "always", "--html", str(html))
    assert headed.stdout.decode().split("\n")[0] == "E3 = ker d2 / im d2", headed.stdout
    again = json.loads(html.read_text().split('id="chart-data">')[1].split("</script>")[0])
    assert [p["name"] for p in again["pages"]] == ["E2", "E3"] and again["start"] == 1


def test_secondary_homotopies_are_saved_and_resumed(tmp_path: Path) -> None:
    """The homotopies go to DIR/secondary bidegree by bidegree; a larger run resumes from them (and recomputes a
    damaged file), and nassau chart --d2 on the directory computes nothing it finds there."""
    from nassau.engine.resolution import Resolution
    from nassau.secondary.homotopy import SAVED_KIND, SecondaryHomotopy
    from nassau.store.save_dir import module_from_manifest

    save = tmp_path / "run"
    first = run_cli("secondary", "S_2", "--stem", "20", "--max-s", "7", "--save-dir", str(save), "--quiet")
    assert first.returncode == 0, first.stderr
    files = sorted((save / SAVED_KIND).glob("*.bin"))
    assert len(files) > 20
    victim = files[len(files) // 2]
    victim.write_bytes(victim.read_bytes()[:-3] + b"xyz")
    again = run_cli("secondary", "S_2", "--stem", "30", "--max-s", "7", "--save-dir", str(save), "--quiet")
    assert again.stdout.decode() == golden("secondary-S_2")
    assert "unusable" in again.stderr.decode() and victim.with_suffix(".corrupt").exists()
    spec, module, _ = module_from_manifest(save)
    from nassau.store.save_dir import SaveDir
    store = SaveDir(save, spec, module, "nassau")
    res = Resolution(module)
    region = Region(max_s=7, min_degree=0, max_stem=30)
    res.algebra.extend(40)
    store.load_into(res)
    h = SecondaryHomotopy(res, region, store)
    assert h.resume() == len(list((save / SAVED_KIND).glob("*.bin")))
    chart = run_cli("chart", str(save), "--d2", "--json", str(tmp_path / "c.json"), "--quiet")
    assert chart.returncode == 0, chart.stderr
    assert {"source": [15, 1, 0], "target": [14, 3, 0]} in json.loads((tmp_path / "c.json").read_text())["d2"]
