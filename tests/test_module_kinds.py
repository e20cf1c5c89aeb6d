"""Finitely presented modules, projective spaces and tensor products: bases, actions and module axioms."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from algebra.milnor.adem import adem_to_milnor, parse_adem
from algebra.milnor.products import multiply_one
from algebra.module.interface import act
from algebra.module.loader import load_module, module_from_spec
from algebra.module.projective_space import rp_coefficient
from algebra.module.spec import ModuleError, ModuleSpec
from algebra.module.tensor import TensorModule
from algebra.module.writer import fd_json
from tests.helpers import DATA, dims_in, run_engine
from tests.oracles import tensor_naive

# REFERENCE-MODULES 1.3: dimensions in degrees 0..24.
FP_DIMENSIONS = {
    "A-mod-Sq1-Sq2": "1 0 0 0 1 0 1 1 1 0 1 1 2 1 2 2 2 1 3 3 3 3 4 3 4",
    "j": "1 0 0 0 0 0 0 1 1 1 1 1 2 2 2 3 3 2 2 3 3 4 5 6 7",
    "j_mod_2": "1 1 0 0 0 0 0 1 2 2 2 2 3 4 4 5 6 5 4 5 6 7 9 11 13",
    "ksp": "1 0 1 1 1 0 2 2 2 2 3 2 3 3 5 5 5 5 7 6 7 9 10 9 11",
}


def write(tmp_path: Path, name: str, body: dict) -> str:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(body))
    return str(path)


def rp(bottom: int, top: int | None = None, **extra) -> dict:
    body = {"p": 2, "type": "real projective space", "min": bottom, **extra}
    if top is not None:
        body["max"] = top
    return body


def fp(gens: dict, milnor: list | None = None, adem: list | None = None) -> dict:
    body = {"p": 2, "type": "finitely presented module", "gens": gens}
    if milnor is not None:
        body["milnor_relations"] = milnor
    if adem is not None:
        body["adem_relations"] = adem
    return body


def poincare(exps: list[int], top: int) -> list[int]:
    """Coefficients of prod_i 1/(1 - t^(e_i)) up to t^top (the Poincare series of a polynomial algebra)."""
    series = [1] + [0] * top
    for e in exps:
        for d in range(e, top + 1):
            series[d] += series[d - e]
    return series


@pytest.mark.parametrize("name,dims", FP_DIMENSIONS.items())
@pytest.mark.parametrize("basis", ["milnor", "adem"])
def test_finitely_presented_dimensions(name: str, dims: str, basis: str) -> None:
    m = load_module(f"{name}@{basis}")
    assert [m.dimension(d) for d in range(25)] == [int(x) for x in dims.split()]
    assert m.max_degree is None


def test_quotients_by_a1_and_a2_are_polynomial_algebras() -> None:
    """A//A(1) ~ F2[xi1^4, xi2^2, xi3, ...], A//A(2) ~ F2[xi1^8, xi2^4, xi3^2, xi4, ...] (REFERENCE-MODULES 8.9)."""
    top = 70
    a1, a2 = load_module("A-mod-Sq1-Sq2"), load_module("A-mod-Sq1-Sq2-Sq4")
    assert [a1.dimension(d) for d in range(top + 1)] == poincare([4, 6, 7, 15, 31, 63], top)
    assert [a2.dimension(d) for d in range(top + 1)] == poincare([8, 12, 14, 15, 31, 63], top)


@pytest.mark.parametrize("s,t,milnor", [(0, 1, "P(1)"), (1, 1, "P(2)"), (3, 1, "P(8)"), (0, 2, "P(0, 1)"),
                                         (1, 2, "P(0, 2)"), (2, 2, "P(0, 4)"), (0, 3, "P(0, 0, 1)"),
                                         (1, 3, "P(0, 0, 2)"), (0, 4, "P(0, 0, 0, 1)")])
def test_p_s_t_is_the_milnor_element_with_2_to_the_s_in_place_t(tmp_path: Path, s: int, t: int, milnor: str) -> None:
    """A relation `P^s_t x` is the relation `P(0, ..., 2^s) x` (2^s in place t): every degree and action agree."""
    by_name = load_module(write(tmp_path, "pst", fp({"x": 0, "y": 1}, milnor=[f"P^{s}_{t} x", f"P^{s}_{t} y"])))
    spelled = load_module(write(tmp_path, "spelled", fp({"x": 0, "y": 1}, milnor=[f"{milnor} x", f"{milnor} y"])))
    for d in range(0, 18):
        assert by_name.dimension(d) == spelled.dimension(d), d
        for e in range(1, 4):
            assert same_action(by_name.action_table(e, d), spelled.action_table(e, d)), (e, d)


def test_a_chart_that_depends_on_p_s_t(tmp_path: Path) -> None:
    """x / (Sq1, Q1) written with P^0_1 and P^0_2 has the chart of the same module written out in the Milnor basis,
    and a different one from P^1_1 in place of P^0_2 (so reading s and t the other way round shows)."""
    charts = []
    for name, relations in (("pst", ["P^0_1 x0", "P^0_2 x0"]), ("spelled", ["P(1) x0", "P(0, 1) x0"]),
                            ("swapped", ["P^0_1 x0", "P^1_1 x0"])):
        res, region = run_engine(write(tmp_path, name, fp({"x0": 0}, milnor=relations)), stem=12, max_s=6)
        charts.append(dims_in(res, region))
    assert charts[0] == charts[1] and charts[0] != charts[2]


def test_finitely_presented_basis_order_and_names() -> None:
    a1 = load_module("A-mod-Sq1-Sq2")
    names = {d: [a1.basis_name(d, i) for i in range(a1.dimension(d))] for d in (0, 4, 6, 7, 12, 14, 15)}
    assert names == {0: ["x0"], 4: ["P(4) x0"], 6: ["P(0, 2) x0"], 7: ["P(0, 0, 1) x0"], 12: ["P(12) x0", "P(0, 4) x0"],
                     14: ["P(8, 2) x0", "P(0, 0, 2) x0"], 15: ["P(8, 0, 1) x0", "P(0, 0, 0, 1) x0"]}
    j = load_module("j")
    assert [j.basis_name(8, 0)] == ["P(1) x7"]  # P(8) x0 + P(1) x7 = 0 has its pivot in the x0 block
    assert [j.basis_name(16, i) for i in range(3)] == ["P(16) x0", "P(0, 3) x7", "P(2, 0, 1) x7"]


def test_adem_monomials_in_the_milnor_basis() -> None:
    a1 = load_module("A-mod-Sq1-Sq2")
    assert adem_to_milnor(a1.algebra, parse_adem("Sq7 Sq1")) == [(5, 1)]  # define_module-fp's conversion
    assert adem_to_milnor(a1.algebra, parse_adem("Sq2 Sq1")) == [(3,), (0, 1)]
    for bad in ("Sq1 Sq2", "Sq0", "P(1)", ""):
        with pytest.raises(ValueError, match="admissible"):
            parse_adem(bad)


def test_define_module_fp_golden_relations_agree_in_both_bases(tmp_path: Path) -> None:
    body = json.loads(DATA.joinpath("define_module-fp").read_text().split("\n")[1])
    path = write(tmp_path, "fpdef", body)
    milnor, adem = load_module(path), load_module(f"{path}@adem")
    for d in range(0, 20):
        assert milnor.dimension(d) == adem.dimension(d)
        for e in range(1, 8):
            assert same_action(milnor.action_table(e, d), adem.action_table(e, d)), (e, d)


@pytest.mark.parametrize("name", ["define_module", "define_module-negative"])
def test_module_files_round_trip_through_the_writer(tmp_path: Path, name: str) -> None:
    text = DATA.joinpath(name).read_text().split("\n")[1]
    assert fd_json(load_module(write(tmp_path, "m", json.loads(text)))) == text


@pytest.mark.parametrize("name", sorted(p.name for p in DATA.glob("tensor*")))
def test_tensor_goldens(name: str) -> None:
    command, expected = DATA.joinpath(name).read_text().split("\n")[:2]
    args = command.split()[2:] or ["S_2", "S_2"]  # `tensor` alone takes both defaults
    assert fd_json(load_module("^".join(args))) == expected


def two_cell_tensors() -> list[TensorModule]:
    """Tensor products with two-dimensional Cartan blocks: DA1 has two cells in degree 6, C2^C2 two in degree 1."""
    return [load_module("DA1^DA1"), TensorModule(load_module("C2^C2"), load_module("C2^C2"), "C2^C2 (x) C2^C2")]


@pytest.mark.parametrize("which", [0, 1])
def test_two_cell_blocks_act_by_the_cartan_formula(which: int, rng: np.random.Generator) -> None:
    """A random Milnor basis element on a random vector in every pair of degrees of DA1 (x) DA1 and (C2 (x) C2) (x)
    (C2 (x) C2), against the Cartan formula applied term by term in the reference's basis order
    (tests/oracles/tensor_naive)."""
    m = two_cell_tensors()[which]
    top = m.max_degree
    assert max(m.left.dimension(d) for d in range(m.left.min_degree, m.left.max_degree + 1)) == 2
    pairs = [(n, e) for n in range(m.min_degree, top) for e in range(1, min(top - n, 12) + 1)
             if m.dimension(n) and m.algebra.dimension(e)]
    assert len(pairs) >= 10
    for n, e in pairs:
        r = m.algebra.element(e, int(rng.integers(m.algebra.dimension(e))))
        x = rng.integers(0, 2, m.dimension(n)).astype(np.uint8)
        assert np.array_equal(act(m, r, n, x), tensor_naive.cartan(m.left, m.right, r, n, x)), (m.name, r, n, x)


@pytest.mark.parametrize("which", [0, 1])
def test_two_cell_blocks_are_written_in_the_reference_order(tmp_path: Path, which: int) -> None:
    """The written module lists the basis in the reference's order (within a block: the left factor's index major)
    and, read back as a finite module, acts as the tensor product does. (The reference's outputs here tensor
    factors with one cell per degree only; this is its documented rule, REFERENCE-MODULES 3.2.)"""
    m = two_cell_tensors()[which]
    degrees = range(m.min_degree, m.max_degree + 1)
    written = json.loads(fd_json(m))
    assert list(written["gens"]) == [name for n in degrees for name in tensor_naive.names(m.left, m.right, n)]
    assert list(written["gens"].values()) == [n for n in degrees for _ in range(m.dimension(n))]
    back = load_module(write(tmp_path, "back", written))
    for n in degrees:
        for e in range(1, m.max_degree - n + 1):
            assert same_action(back.action_table(e, n), m.action_table(e, n)), (n, e)


def same_action(a: np.ndarray | None, b: np.ndarray | None) -> bool:
    """Two action tables agree (None means zero)."""
    if a is None or b is None:
        return not (a if a is not None else b if b is not None else np.zeros(1)).any()
    return np.array_equal(a, b)


def module_axioms(m, rng: np.random.Generator, degrees: range, trials: int = 60) -> int:
    """Check (ab)x = a(bx) on random basis elements a, b and random vectors x; returns how many checks ran."""
    alg = m.algebra
    alg.extend(24)
    # Degrees where the algebra has elements: over a sub-Hopf algebra such as A(1) (top degree 6) drawing from 0..11
    # blindly left some seeds with too few checks.
    a_degs = [d for d in range(1, 12) if alg.dimension(d)]
    b_degs = [d for d in range(12) if alg.dimension(d)]
    checked = 0
    for _ in range(trials):
        x_deg = int(rng.choice(list(degrees)))
        da, db = int(rng.choice(a_degs)), int(rng.choice(b_degs))
        if m.dimension(x_deg) == 0:
            continue
        a = alg.element(da, int(rng.integers(alg.dimension(da))))
        b = alg.element(db, int(rng.integers(alg.dimension(db))))
        x = rng.integers(0, 2, m.dimension(x_deg))
        bits = np.unpackbits(multiply_one(alg, a, b).view(np.uint8), bitorder="little")[: alg.dimension(da + db)]
        lhs = np.zeros(m.dimension(x_deg + da + db), dtype=np.uint8)
        for k in np.nonzero(bits)[0]:
            lhs ^= act(m, alg.element(da + db, int(k)), x_deg, x)
        assert np.array_equal(lhs, act(m, a, x_deg + db, act(m, b, x_deg, x))), (m.name, a, b, x_deg)
        checked += 1
    return checked


@pytest.mark.parametrize("name,degrees", [
    ("A-mod-Sq1-Sq2", range(0, 20)), ("j", range(0, 20)), ("j_mod_2", range(0, 20)), ("ksp", range(0, 16)),
    ("RP_inf", range(1, 30)), ("RP_-4_inf", range(-4, 20)), ("tmf_RP", range(-9, 0)), ("ko_sm_RP_inf", range(1, 20)),
    ("C2^Ceta", range(0, 4)), ("Joker^C2", range(0, 6)), ("RP_inf^C2", range(1, 15)), ("C2[-1]^RP4", range(0, 5)),
])
def test_new_kinds_are_modules(name: str, degrees: range, rng: np.random.Generator) -> None:
    m = load_module(name)
    assert module_axioms(m, rng, degrees) > 10


def test_projective_space_action_rule() -> None:
    """Sq^i x^-4 != 0 iff 4 | i; Sq^i x^-1 != 0 always; Sq^i x^-2 != 0 iff i even; P(0,1) x^k != 0 iff k odd."""
    assert [rp_coefficient(-4, (i,)) for i in range(1, 13)] == [int(i % 4 == 0) for i in range(1, 13)]
    assert all(rp_coefficient(-1, (i,)) for i in range(1, 40))
    assert [rp_coefficient(-2, (i,)) for i in range(1, 13)] == [int(i % 2 == 0) for i in range(1, 13)]
    assert [rp_coefficient(k, (0, 1)) for k in range(-6, 12)] == [k % 2 for k in range(-6, 12)]
    assert not any(rp_coefficient(k, (1, 1)) for k in range(-20, 20))
    # P(i) x^k = binom(k, i) x^(k+i) for k >= 0 (Lucas)
    assert all(rp_coefficient(k, (i,)) == int(i & k == i) for k in range(40) for i in range(1, 40))


def test_rp4_file_is_the_projective_space(tmp_path: Path) -> None:
    stunted, given = load_module(write(tmp_path, "rp14", rp(1, 4))), load_module("RP4")
    for d in range(0, 6):
        assert stunted.dimension(d) == given.dimension(d)
        for e in range(1, 4):
            assert same_action(stunted.action_table(e, d), given.action_table(e, d)), (e, d)


def test_clear_bottom_keeps_the_a2_submodule_cells() -> None:
    m = load_module("tmf_RP")
    assert [d for d in range(-20, 5) if m.dimension(d)] == [-9, -5, -3, -2, -1]
    assert m.basis_name(-5, 0) == "x^{-5}"


@pytest.mark.parametrize("bottom", range(-17, 9))  # every residue mod 8, negative and positive
def test_clear_bottom_for_every_residue_of_min(tmp_path: Path, bottom: int) -> None:
    """clear_bottom raises min to the least m >= min with m = -1 mod 8 and drops m+1, m+2, m+3, m+5, m+9 (written
    out by hand below); the cells left act as in the finite space RP_m^(m+16), whose bottom is m."""
    m = next(k for k in range(bottom, bottom + 8) if k % 8 == 7)
    top = m + 16
    cleared = load_module(write(tmp_path, "cleared", rp(bottom, top, clear_bottom=True)))
    plain = load_module(write(tmp_path, "plain", rp(m, top)))
    cells = [k for k in range(m, top + 1) if k - m not in (1, 2, 3, 5, 9)]
    assert cleared.min_degree == m
    assert [k for k in range(bottom - 1, top + 2) if cleared.dimension(k)] == cells
    for k in cells:
        for e in range(1, top - k + 1):
            expected = plain.action_table(e, k) if k + e in cells else None
            assert same_action(cleared.action_table(e, k), expected), (k, e)


def test_tensor_with_the_sphere_is_the_identity() -> None:
    m, t = load_module("Joker"), load_module("S_2^Joker")
    for d in range(0, 5):
        assert t.dimension(d) == m.dimension(d)
        for e in range(1, 5):
            assert same_action(m.action_table(e, d), t.action_table(e, d)), (e, d)


def test_infinite_tensor_factor_is_lazy() -> None:
    m = load_module("RP_inf^C2")
    assert m.max_degree is None and m.min_degree == 1
    assert [m.dimension(d) for d in range(1, 8)] == [1, 2, 2, 2, 2, 2, 2]
    assert m.basis_name(3, 0) == "x^{2}.x1" and m.basis_name(3, 1) == "x^{3}.x0"


@pytest.mark.parametrize("body,message", [
    (fp({"x0": 0}, ["P(1) y"]), "unknown generator 'y'"),
    (fp({"x0": 0, "x2": 2}, ["P(2) x0 + P(1) x2"]), "inconsistent degree: expected 2 but 'P(1) x2' has degree 3"),
    (fp({"x0": 0}, adem=["Sq1 x0"]), "needs 'milnor_relations' for the milnor basis (it has adem_relations"),
    (fp({"x0": 0}, ["Q(1) x0"]), "cannot parse"),
    (fp({"x0": 0}, ["P(1) x0"], adem=["Sq1 Sq2 x0"]), None),  # the other basis' list is not read
    (rp(3, 1), "max 1 is below min 3"),
    (rp(0.5), "'min' must be an integer"),
    ({"p": 2, "type": "real projective space"}, "needs an integer 'min'"),
])
def test_bad_module_files(tmp_path: Path, body: dict, message: str | None) -> None:
    path = write(tmp_path, "bad", body)
    if message is None:
        load_module(path)
        with pytest.raises(ModuleError, match="not an admissible"):
            load_module(f"{path}@adem")
        return
    with pytest.raises(ModuleError) as info:
        load_module(path)
    assert message in str(info.value) and path in str(info.value)


def test_tensor_of_different_primes_is_refused() -> None:
    with pytest.raises(ModuleError, match=r"cannot tensor C2 \(p = 2.*\) with S_3 \(p = 3.*the primes differ"):
        load_module("C2^S_3")


def test_tensor_over_different_algebras_is_refused() -> None:
    with pytest.raises(ModuleError, match="must live over the same algebra"):
        load_module("C2^ko")


def test_a_tensor_spec_rebuilds_from_its_embedded_definition() -> None:
    """What a save directory stores: the spec's data alone (no files) gives the same module."""
    first = load_module("Joker^RP4")
    from algebra.module.spec import read_spec
    spec = read_spec("Joker^RP4")
    again = module_from_spec(ModuleSpec(spec.name, spec.shift, Path("manifest"), json.loads(json.dumps(spec.data))))
    assert [again.dimension(d) for d in range(10)] == [first.dimension(d) for d in range(10)]


def test_rp_coefficients_of_many_words_are_the_one_at_a_time_ones() -> None:
    """The vectorised coefficients (what an RP's action tables use) against rp_coefficient, over every Milnor basis
    element of degree <= 40 and fresh random k of both signs (0 included)."""
    from algebra.milnor.basis import MilnorBasis
    from algebra.milnor.ppart import unpack
    from algebra.module.projective_space import rp_coefficients

    basis, rng = MilnorBasis(), np.random.default_rng()
    for k in [0, -1, *rng.integers(-70, 70, size=12).tolist()]:
        for d in range(41):
            words = basis.words(d)
            assert rp_coefficients(k, words).tolist() == [rp_coefficient(k, unpack(int(w))) for w in words], (k, d)
