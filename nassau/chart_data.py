"""The bridge from a resolution to the chart model that every exporter reads."""
from __future__ import annotations

import numpy as np

from charts.model import Chart, Product
from nassau.filtration_one import CHART_OPERATIONS, product_matrices
from nassau.region import Region
from nassau.resolution import Resolution


def build_chart(res: Resolution, region: Region, module_name: str, algorithm: str, products: bool = True) -> Chart:
    """dim Ext over the region, and (if asked) every nonzero entry of the h0..h3 product matrices."""
    rows = region.chart_rows()
    dims = {(t - s, s): k for (s, t), k in res.dims().items() if k and region.contains(s, t)}
    entries = []
    if products:
        for pm in product_matrices(res, region, CHART_OPERATIONS):
            for j, k in zip(*np.nonzero(pm.matrix)):
                entries.append(Product(f"h{pm.i}", (*pm.source, int(j)), (*pm.target, int(k))))
    return Chart(module=module_name, prime=2, algorithm=algorithm, max_stem=region.chart_max_stem,
                 max_s=region.max_s, min_degree=res.min_degree, rows=rows, dims=dims, products=entries)
