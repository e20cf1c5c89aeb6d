"""Modules from JSON: every bundled p = 2 definition loads and is a module; bad files fail with a named cause."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from algebra.module_loader import load_module
from algebra.module_json import ModuleError, bundled_dir
from algebra.products import multiply_one

FD_MODULES = sorted(p.stem for p in bundled_dir().glob("*.json")
                    if (lambda d: d["p"] == 2 and d["type"] == "finite dimensional module")(json.loads(p.read_text())))


def test_the_bundled_set_is_complete() -> None:
    assert len(list(bundled_dir().glob("*.json"))) == 46
    assert {"S_2", "C2", "Joker", "DA1", "RP4", "tmf2", "ko", "Z", "Csigma"} <= set(FD_MODULES)
    assert (bundled_dir() / "LICENSE-MIT").is_file() and (bundled_dir() / "SOURCE.md").is_file()


@pytest.mark.parametrize("name", FD_MODULES)
def test_bundled_module_is_a_module(name: str, rng: np.random.Generator) -> None:
    """(ab)x = a(bx) on random basis elements a, b and every x: an independent check of the derived actions."""
    m = load_module(name)
    alg = m.algebra
    lo, hi = m.min_degree, m.max_degree
    for _ in range(60):
        x_deg = int(rng.integers(lo, hi + 1))
        if m.dimension(x_deg) == 0 or x_deg == hi:
            continue
        da = int(rng.integers(1, hi - x_deg + 1))
        db = int(rng.integers(0, hi - x_deg - da + 1))
        if alg.dimension(da) == 0 or alg.dimension(db) == 0:
            continue
        a = alg.element(da, int(rng.integers(alg.dimension(da))))
        b = alg.element(db, int(rng.integers(alg.dimension(db))))
        x = np.zeros(m.dimension(x_deg), dtype=np.int64)
        x[int(rng.integers(len(x)))] = 1
        ab = multiply_one(alg, a, b)
        bits = np.unpackbits(ab.view(np.uint8), bitorder="little")[: alg.dimension(da + db)]
        lhs = np.zeros(m.dimension(x_deg + da + db), dtype=np.int64)
        for k in np.nonzero(bits)[0]:
            lhs ^= m.act(alg.element(da + db, int(k)), x_deg, x)
        assert np.array_equal(lhs, m.act(a, x_deg + db, m.act(b, x_deg, x))), (a, b, x_deg)


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
    ({"p": 3, "type": "finite dimensional module", "gens": {"x0": 0}, "actions": []}, "p = 3 is not supported"),
    ({"p": 2, "type": "finitely presented module", "gens": {"x0": 0}}, "needs 'milnor_relations'"),
    ({"p": 2, "type": "cw complex", "gens": {"x0": 0}}, "not supported yet"),
    (fd({}, []), "nonempty"),
])
def test_bad_module_files_name_the_problem(tmp_path: Path, body: object, message: str) -> None:
    path = write(tmp_path, "bad", body)
    with pytest.raises(ModuleError, match=message) as info:
        load_module(path)
    assert str(path) in str(info.value)


def test_lookup_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert load_module("Ceta").source.endswith("modules/Ceta.json")
    (tmp_path / "steenrod_modules").mkdir()
    write(tmp_path / "steenrod_modules", "Ceta", fd({"x0": 0, "x1": 1}, ["Sq1 x0 = x1"]))
    assert load_module("Ceta").max_degree == 1
    write(tmp_path, "Ceta", fd({"x0": 0, "x4": 4}, ["Sq4 x0 = x4"]))
    assert load_module("Ceta").max_degree == 4
    with pytest.raises(ModuleError, match="unknown module 'Nope'"):
        load_module("Nope")
    with pytest.raises(ModuleError, match="unknown basis @serre"):
        load_module("S_2@serre")
