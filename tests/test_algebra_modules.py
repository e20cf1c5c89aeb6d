"""Modules from JSON: every bundled p = 2 definition loads and is a module; bad files fail with a named cause."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from algebra.milnor.products import multiply_one
from algebra.module.loader import load_module
from algebra.module.spec import ModuleError, bundled_dir

FD_MODULES = sorted(p.stem for p in bundled_dir().glob("*.json")
                    if (lambda d: d["p"] == 2 and d["type"] == "finite dimensional module")(json.loads(p.read_text())))


def test_the_bundled_set_is_complete() -> None:
    assert len(list(bundled_dir().glob("*.json"))) == 46
    assert {"S_2", "C2", "Joker", "DA1", "RP4", "tmf2", "ko", "Z", "Csigma"} <= set(FD_MODULES)
    assert (bundled_dir() / "LICENSE-MIT").is_file() and (bundled_dir() / "SOURCE.md").is_file()


@pytest.mark.parametrize("name", FD_MODULES)
def test_bundled_module_is_a_module(name: str) -> None:
    """(ab)x = a(bx) for every pair of basis elements a, b and every x, a = 1 or b = 1 included (so a one-cell
    module checks its unit): an independent check of the actions derived from the file's."""
    m = load_module(name)
    alg = m.algebra
    lo, hi = m.min_degree, m.max_degree
    checked = 0
    for x_deg in range(lo, hi + 1):
        if m.dimension(x_deg) == 0:
            continue
        for da in range(hi - x_deg + 1):
            for db in range(hi - x_deg - da + 1):
                out_deg = x_deg + da + db
                ab_acts = [m.action_matrix(da + db, k, x_deg).astype(np.int64) for k in range(alg.dimension(da + db))]
                for i in range(alg.dimension(da)):
                    for j in range(alg.dimension(db)):
                        ab = multiply_one(alg, alg.element(da, i), alg.element(db, j))
                        terms = np.nonzero(np.unpackbits(ab.view(np.uint8), bitorder="little"))[0]
                        lhs = np.zeros((m.dimension(x_deg), m.dimension(out_deg)), dtype=np.int64)
                        for k in terms:
                            lhs ^= ab_acts[k]
                        rhs = m.action_matrix(db, j, x_deg).astype(np.int64) @ m.action_matrix(da, i, x_deg + db)
                        assert np.array_equal(lhs, rhs % 2), (alg.element(da, i), alg.element(db, j), x_deg)
                        checked += 1
    assert checked > 0


def test_given_actions_are_kept() -> None:
    joker = load_module("Joker")
    assert list(joker.act((2,), 0, np.array([1]))) == [1]
    assert list(joker.act((1,), 3, np.array([1]))) == [1]
    assert list(joker.act((2,), 2, np.array([1]))) == [1]


def test_shift_and_suspension_syntax() -> None:
    assert load_module("C2[3]").min_degree == 3 and load_module("C2[3]").name == "C2[3]"
    assert load_module("ko[-2]").min_degree == -2
    assert load_module("S_2@milnor").name == "S_2"


def write(tmp_path: Path, name: str, body: object) -> str:
    path = tmp_path / f"{name}.json"
    path.write_text(body if isinstance(body, str) else json.dumps(body))
    return str(path)


def fd(gens: dict, actions: list) -> dict:
    return {"p": 2, "type": "finite dimensional module", "gens": gens, "actions": actions}


@pytest.mark.parametrize("body,message", [
    ("{not json", "malformed JSON"),
    (fd({"x0": 0}, ["Sq1 y = x0"]), "unknown generator 'y'"),
    (fd({"x0": 0, "x2": 2}, ["Sq1 x0 = x2"]), "degree mismatch"),
    (fd({"x0": 0, "x1": 1, "x2": 2}, ["Sq1 x0 = x1", "Sq1 x1 = x2"]), "relation Sq1 Sq1 = 0"),
    (fd({"x0": 0, "x2": 2, "x4": 4}, ["Sq2 x0 = x2", "Sq2 x2 = x4"]), "Sq2 Sq2"),
    (fd({"x0": 0, "x3": 3}, ["Sq3 x0 = x3"]), "not a generator"),
    ({"p": 4, "type": "finite dimensional module", "gens": {"x0": 0}, "actions": []}, "p = 4 is not a prime"),
    ({"p": 3, "type": "real projective space", "min": 1}, "at p = 3 only finite dimensional modules"),
    ({"p": 2, "type": "finitely presented module", "gens": {"x0": 0}}, "needs 'milnor_relations'"),
    ({"p": 2, "type": "cw complex", "gens": {"x0": 0}}, "not supported yet"),
    (fd([], []), "'gens' must be an object"),
])
def test_bad_module_files_name_the_problem(tmp_path: Path, body: object, message: str) -> None:
    path = write(tmp_path, "bad", body)
    with pytest.raises(ModuleError, match=message) as info:
        load_module(path)
    assert str(path) in str(info.value)


def test_lookup_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert load_module("Ceta").source.endswith("bundled/Ceta.json")
    (tmp_path / "steenrod_modules").mkdir()
    write(tmp_path / "steenrod_modules", "Ceta", fd({"x0": 0, "x1": 1}, ["Sq1 x0 = x1"]))
    assert load_module("Ceta").max_degree == 1
    write(tmp_path, "Ceta", fd({"x0": 0, "x4": 4}, ["Sq4 x0 = x4"]))
    assert load_module("Ceta").max_degree == 4
    with pytest.raises(ModuleError, match="unknown module 'Nope'"):
        load_module("Nope")
    with pytest.raises(ModuleError, match="unknown basis @serre"):
        load_module("S_2@serre")
