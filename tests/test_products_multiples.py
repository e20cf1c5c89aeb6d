"""Products by c x at odd p, for every c in 1..p-1: `nassau product MODULE --by x=n,s,[c]` prints c times the
products by x=n,s,[1] (products are linear in the class one multiplies by). The classes a_0 and h_0 go through the
filtration-one shortcut (read off d, then scaled by c), a random class of higher filtration through a lifted chain
map; each is compared with the c = 1 output of the same command, entry by entry mod p."""
from __future__ import annotations

import re

import numpy as np
import pytest

from tests.helpers import run_cli

LINE = re.compile(r"^(\w+) (x_\(\d+, \d+, \d+\)) = \[([\d, ]*)\]$")


def products(module: str, stem: int, max_s: int, by: dict[str, tuple[int, int, list[int]]]) -> dict[str, dict]:
    """name -> {source basis element: its product's vector} from one `nassau product` with one --by per name."""
    args = [a for name, (n, s, v) in by.items()
            for a in ("--by", f"{name}={n},{s},[{','.join(str(x) for x in v)}]")]
    out = run_cli("product", module, *args, "--stem", str(stem), "--max-s", str(max_s), "--quiet")
    assert out.returncode == 0, out.stderr.decode()
    got: dict[str, dict] = {name: {} for name in by}
    for line in out.stdout.decode().splitlines():
        m = LINE.match(line)
        assert m, line
        got[m.group(1)][m.group(2)] = [int(x) for x in m.group(3).split(",") if x.strip()]
    return got


def assert_multiple(p: int, c: int, one: dict, times_c: dict) -> None:
    assert one.keys() == times_c.keys()
    assert any(any(v) for v in one.values()), "the products by x should not all vanish"
    for source, vector in one.items():
        assert times_c[source] == [c * x % p for x in vector], (c, source)


@pytest.mark.parametrize("p, stem, max_s", [(3, 24, 6), (5, 40, 5)])
def test_products_by_c_a0_and_c_h0_are_c_times_those_by_a0_and_h0(p: int, stem: int, max_s: int) -> None:
    """a_0 = (0, 1), h_0 = (2p - 3, 1): the products by every multiple c a_0, c h_0 (one command)."""
    h0 = 2 * p - 3
    by = {f"{name}{c}": (n, 1, [c]) for name, n in (("a", 0), ("h", h0)) for c in range(1, p)}
    got = products(f"S_{p}", stem, max_s, by)
    for name in ("a", "h"):
        for c in range(2, p):
            assert_multiple(p, c, got[f"{name}1"], got[f"{name}{c}"])
    assert got["a1"]["x_(0, 0, 0)"] == [1] and got["a2"]["x_(0, 0, 0)"] == [2]  # a_0 itself, then 2 a_0


@pytest.mark.parametrize("p, stem, max_s", [(3, 24, 6), (5, 40, 5)])
def test_products_by_a_multiple_of_a_random_class(p: int, stem: int, max_s: int, rng: np.random.Generator) -> None:
    """A random nonzero class v of a random bidegree (s >= 1) and a random c in 2..p-1: products by c v are c times
    those by v. The bidegrees and their dimensions are read off the products by a_0 (one line per basis element)."""
    basis = products(f"S_{p}", stem, max_s, {"a": (0, 1, [1])})["a"]
    dims: dict[tuple[int, int], int] = {}
    for name in basis:
        n, s, _ = (int(x) for x in name[3:-1].split(","))
        dims[(n, s)] = dims.get((n, s), 0) + 1
    at = sorted(b for b in dims if 1 <= b[1] < max_s and b[0] > 0)
    n, s = at[rng.integers(len(at))]
    v = [int(x) for x in rng.integers(0, p, dims[(n, s)])]
    if not any(v):
        v[int(rng.integers(len(v)))] = 1
    c = int(rng.integers(2, p))
    got = products(f"S_{p}", stem, max_s, {"v": (n, s, v), "cv": (n, s, [c * x % p for x in v])})
    assert got["v"]["x_(0, 0, 0)"] == v  # 1 v = v: not every product vanishes
    assert got["v"].keys() == got["cv"].keys()
    for source, vector in got["v"].items():
        assert got["cv"][source] == [c * x % p for x in vector], (n, s, v, c, source)
