"""The product lines a chart carries by other classes than h0..h3 (`--products`, `products=`): each named class of
the sphere's Ext, found in the unit's resolution beside the module's, and the Ext algebra that lifts by it."""
from __future__ import annotations

from typing import Any

from nassau.api.resolved import Resolved, unit_beside
from nassau.engine.region import Region
from nassau.engine.resolve import CHANGE_OF_RINGS
from nassau.products.ext_algebra import ExtAlgebra
from nassau.products.ext_class import ClassError, known_bidegree, parse_operation, sphere_class


def chart_operations(names: list[str] | None, mod: Resolved) -> dict[str, Any]:
    """build_chart's keywords for the operations named as --products takes them (none: the default h0..h3).

    A bad name raises ClassError (the CLI prints it as one line)."""
    if not names:
        return {}
    res = mod.resolution
    if res.algebra.prime != 2:
        raise ClassError(f"--products draws lifted products, which are implemented at p = 2 only; at p = "
                         f"{res.algebra.prime} the charts carry a0 and h0")
    items = [parse_operation(x) for text in names for x in _split(text)]
    reach = [(c.n, c.s) if c is not None else known_bidegree(name) for name, c in items]
    unit = unit_beside(mod, Region.through([b for b in reach if b is not None], 0))
    operations = {}
    for name, c in items:
        c = c if c is not None else sphere_class(name, unit.resolution)
        c.check_in(unit.resolution, f"the class {name}")
        operations[name] = c
        if mod.algorithm == CHANGE_OF_RINGS and not (c.s == 1 and c.vector == (1,)):
            raise ClassError(f"{name}: a change-of-rings resolution holds Ext over the subalgebra, whose classes "
                             "are not the sphere's; draw products by h_i only, or use --algorithm standard")
    return {"operations": operations, "alg": ExtAlgebra(res, unit.resolution, mod.threads)}


def _split(text: str) -> list[str]:
    """`h0,h1,c0` -> names; an explicit `NAME=n,s,[v]` is one item."""
    return [text] if "=" in text else [x for x in text.split(",") if x]
