"""Sq^0 on Ext(S) by the doubled complex: the reference's sq0 golden byte for byte on both algorithms, Sq^0 h_i =
h_(i+1), Sq^0 is a ring map (on fresh random classes), and the answer does not depend on the thread count."""
from __future__ import annotations

import numpy as np
import pytest

from nassau.products.ext_algebra import ExtAlgebra
from nassau.products.ext_class import ExtClass
from nassau.products.product_lines import lines
from nassau.products.sq0 import sq0_rows
from tests.helpers import golden, run_cli, run_engine


@pytest.mark.parametrize("algorithm", ["standard", "nassau"])
def test_the_references_sq0(algorithm: str) -> None:
    """sq0-adem is the same text as sq0-milnor (every class there is basis-independent), so both are compared."""
    res, region = run_engine("S_2", stem=30, max_s=7, algorithm=algorithm)
    text = "".join(x + "\n" for x in lines("Sq^0", sq0_rows(res, region)))
    assert text == golden("sq0-milnor") == golden("sq0-adem")


def test_cli_on_two_threads() -> None:
    out = run_cli("sq0", "S_2", "--stem", "30", "--max-s", "7", "--threads", "2", "--quiet")
    assert out.returncode == 0, out.stderr
    assert out.stdout.decode() == golden("sq0-milnor")
    bad = run_cli("sq0", "C2", "--stem", "10", "--quiet")
    assert bad.returncode == 2 and b"S_2 only" in bad.stderr


def test_sq0_is_a_ring_map_sending_h_i_to_h_i_plus_1(rng) -> None:
    res, region = run_engine("S_2", stem=36, max_s=6, algorithm="nassau")
    sq0 = {(r.n, r.s, r.j): np.array(r.vector, dtype=np.int64) for r in sq0_rows(res, region)}
    for i in range(4):
        assert sq0[((1 << i) - 1, 1, 0)].tolist() == [1]  # h_i -> h_(i+1), the only class at (2^(i+1) - 1, 1)
    alg = ExtAlgebra(res, res)

    def image(c: ExtClass) -> ExtClass:
        v = np.zeros(res.new_gens.get((c.s, 2 * c.t), 0), dtype=np.int64)
        for j, coefficient in enumerate(c.vector):
            v = (v + coefficient * sq0[(c.n, c.s, j)]) % 2
        return ExtClass(2 * c.n + c.s, c.s, tuple(int(x) for x in v))

    def product(x: ExtClass, y: ExtClass) -> ExtClass:
        m = alg.products(x, [(y.n, y.s)])[(y.n, y.s)]
        return ExtClass(x.n + y.n, x.s + y.s, tuple(int(v) for v in (y.array.astype(np.int64) @ m) % 2))

    found = sorted((t - s, s) for (s, t), k in res.dims().items() if k and 1 <= s <= 3 and 2 * (t - s) + s <= 12)
    def random_class(n: int, s: int) -> ExtClass:
        v = rng.integers(0, 2, res.new_gens[(s, n + s)])
        v[rng.integers(len(v))] = 1
        return ExtClass(n, s, tuple(int(x) for x in v))

    checked = 0
    for _ in range(12):
        x, y = (random_class(*found[k]) for k in rng.integers(len(found), size=2))
        xy = product(x, y)
        if not region.contains(xy.s, 2 * xy.t):
            continue
        assert image(xy) == product(image(x), image(y)), (x, y)
        checked += 1
    assert checked
