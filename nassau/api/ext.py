"""What the Python API returns: Ext of a module over a computed region, and every picture of it.

Everything is read off one chart model (charts.model.Chart), so `to_json()`, `svg()`, `html()` and `text()` are the
CLI's --json, --svg and --html files and its printed chart, and a notebook cell showing an Ext draws the page.
"""
from __future__ import annotations

from functools import cached_property
from typing import Any

from charts.html import notebook_html, to_html
from charts.json_export import to_json
from charts.model import Chart, Differential, Generator, Product
from charts.pages import e3
from charts.seqsee import to_seqsee
from charts.svg import to_svg
from charts.text import text_chart
from nassau.api.chart_data import build_chart, d2_differentials
from nassau.api.chart_operations import chart_operations
from nassau.api.resolved import Resolved
from nassau.engine.errors import EngineError
from nassau.secondary.homotopy import check_secondary, secondary_homotopy


class Ext:
    """Ext^{s,t} of `module` for the (n, s) of `region`, read off its minimal resolution.

    `dims` and `generators` need only the resolution; `chart` (and `products`, the pictures, the JSON) adds the
    product lines, by h0..h3 or by the classes named in `operations` (as `--products` names them), computed once
    on first use.
    """

    def __init__(self, resolved: Resolved, operations: list[str] | None = None, d2: bool = False,
                 page: int = 2) -> None:
        if page not in (2, 3):
            raise EngineError(f"page {page} is not drawn (2: E2, 3: E3 after d2)")
        self.resolved = resolved
        self.operations = operations
        #: Whether the chart carries d2 (computed on first use; page 3 needs it).
        self.with_d2 = d2 or page == 3
        self.page = page
        if self.with_d2:
            check_secondary(resolved.resolution.module)

    @property
    def resolution(self):
        return self.resolved.resolution

    @property
    def region(self):
        return self.resolved.region

    @property
    def module(self) -> str:
        """The module's name as it was asked for (`C2^Ceta`, `ko[-2]`)."""
        return self.resolved.label

    @property
    def algorithm(self) -> str:
        return self.resolved.algorithm

    @property
    def loaded(self) -> int:
        """Bidegrees read from a save directory instead of computed."""
        return self.resolved.loaded

    @cached_property
    def d2(self) -> list[Differential]:
        """The nonzero entries of the Adams d2 over the region (the secondary lift, nassau.secondary.homotopy); its
        homotopies are saved to and resumed from the run's save directory."""
        r = self.resolved
        return d2_differentials(secondary_homotopy(r.resolution, r.region, r.threads, r.store), r.region)

    @cached_property
    def e2_chart(self) -> Chart:
        """The E2 chart with its product lines (and d2 when asked for)."""
        ops = chart_operations(self.operations, self.resolved)
        return build_chart(self.resolution, self.region, self.module, self.algorithm, products=True, **ops,
                           d2=self.d2 if self.with_d2 else None)

    @cached_property
    def chart(self) -> Chart:
        """The chart model of the page asked for (E2, or E3 = ker d2 / im d2): what every exporter reads."""
        return e3(self.e2_chart).chart if self.page == 3 else self.e2_chart

    @cached_property
    def _dims_only(self) -> Chart:
        return build_chart(self.resolution, self.region, self.module, self.algorithm, products=False)

    def _any_chart(self) -> Chart:
        """The chart with products if it is built already, else one without (products cost lifting); page 3
        always needs its products and d2."""
        return self.__dict__.get("chart") or (self.chart if self.page == 3 else self._dims_only)

    @property
    def dims(self) -> dict[tuple[int, int], int]:
        """(stem n, filtration s) -> dim Ext^{s, n+s} (of E3 on page 3), for the nonzero ones."""
        return dict(self._any_chart().dims)

    @property
    def generators(self) -> list[Generator]:
        """Every (n, s, j), i.e. the class x_(n, s, j), sorted by (n, s, j)."""
        return [(n, s, j) for (n, s), d in sorted(self.dims.items()) for j in range(d)]

    def counted(self) -> str:
        """What the chart counts, in words: `221 generators` on E2 (one per class of Ext), `166 classes on E3 (of
        221 generators on E2)` on page 3, whose classes are not generators."""
        count = sum(self.dims.values())
        if self.page == 2:
            return f"{count} generators"
        return f"{count} classes on E3 (of {sum(self._dims_only.dims.values())} generators on E2)"

    @property
    def products(self) -> list[Product]:
        """The nonzero entries of the product matrices: op x_source has x_target in its expansion."""
        return list(self.chart.products)

    def text(self) -> str:
        """The chart as `nassau resolve` prints it (the reference's text, byte for byte)."""
        return text_chart(self._any_chart())

    def to_json(self) -> dict[str, Any]:
        """The chart as --json writes it (layout in the README)."""
        return to_json(self.chart)

    def svg(self) -> str:
        """The chart as --svg draws it."""
        return to_svg(self.chart)

    def html(self) -> str:
        """The interactive page --html writes: with d2 known, E2 and E3 with a switch (on E3 for page 3)."""
        return to_html(*self._page_chart())

    def seqsee(self) -> dict[str, Any]:
        """SeqSee's input JSON, as --seqsee writes it."""
        return to_seqsee(self.chart)

    def _repr_svg_(self) -> str:
        return self.svg()

    def _repr_html_(self) -> str:
        chart, page = self._page_chart()
        return notebook_html(chart, show=page)

    def _page_chart(self) -> tuple[Chart, str]:
        """The chart the page draws (E2 with d2 when d2 is known: it shows E3 beside it) and the page it opens on."""
        chart = self.e2_chart if self.with_d2 and self.e2_chart.d2 else self.chart
        return chart, self.chart.page

    def __repr__(self) -> str:
        return f"<Ext of {self.module} through {self.region.describe()}: {self.counted()} ({self.algorithm})>"
