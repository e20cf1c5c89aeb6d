"""The bridge from a resolution to the chart model that every exporter reads."""
from __future__ import annotations

import numpy as np

from charts.model import Chart, Differential, Product
from nassau.engine.region import Region
from nassau.engine.resolution import Resolution
from nassau.products.ext_algebra import ExtAlgebra
from nassau.products.ext_class import ExtClass
from nassau.products.filtration_one import chart_operations, product_matrices
from nassau.products.product_lines import below_top, nonzero_bidegrees
from nassau.secondary.homotopy import SecondaryHomotopy, d2_entries


def build_chart(res: Resolution, region: Region, module_name: str, algorithm: str, products: bool = True,
                operations: dict[str, ExtClass] | None = None, alg: ExtAlgebra | None = None,
                d2: list[Differential] | None = None) -> Chart:
    """dim Ext over the region and, if asked, every nonzero entry of its product matrices: by h0..h3, or by the
    named classes of `operations` (h_i read off the resolution, any other class lifted through `alg`); d2 when
    it was computed (nassau.secondary.homotopy)."""
    rows = region.chart_rows()
    dims = {(t - s, s): k for (s, t), k in res.dims().items() if k and region.contains(s, t)}
    entries: list[Product] = []
    defaults = chart_operations(res)
    shifts = {name: shift for name, (_, shift) in defaults.items()}
    if products and operations is None:
        entries = _filtration_one(res, region, {name: i for name, (i, _) in defaults.items()})
    elif products:
        shifts = {name: (c.n, c.s) for name, c in operations.items()}
        h_i = {name: c.h_index for name, c in operations.items() if c.h_index is not None}
        by_h = _filtration_one(res, region, h_i)
        for name, c in operations.items():
            if name in h_i:
                entries.extend(p for p in by_h if p.op == name)
                continue
            at = [x for x in nonzero_bidegrees(res, region) if below_top(region, x[0] + c.n, x[1] + c.s)]
            for (n, s), mat in alg.products(c, at).items():
                entries.extend(Product(name, (n, s, int(j)), (n + c.n, s + c.s, int(k)))
                               for j, k in zip(*np.nonzero(mat)))
    return Chart(module=module_name, prime=res.field.p, algorithm=algorithm, max_stem=region.chart_max_stem,
                 max_s=region.max_s, min_degree=res.min_degree, rows=rows, dims=dims, products=entries,
                 operations=shifts, d2=list(d2 or []))


def _filtration_one(res: Resolution, region: Region, names: dict[str, int]) -> list[Product]:
    """The nonzero entries of the h_i matrices, labelled by the given names (name -> i)."""
    label = {i: name for name, i in names.items()}
    out = []
    for pm in product_matrices(res, region, label):
        for j, k in zip(*np.nonzero(pm.matrix)):
            out.append(Product(label[pm.i], (*pm.source, int(j)), (*pm.target, int(k))))
    return out


def d2_differentials(h: SecondaryHomotopy, region: Region) -> list[Differential]:
    """The nonzero entries of d2 over the region, as the chart model holds them."""
    return [Differential((n, s, j), (n - 1, s + 2, k)) for (n, s, j), row in d2_entries(h, region)
            for k, v in enumerate(row) if v]
