"""The JSON export: the documented layout, a lossless round trip, and writes that are never seen half done."""
from __future__ import annotations

import json
import os

import pytest

from charts import atomic
from charts.json_export import from_json, to_json, write_json
from charts.model import Chart, Product, rows_rectangle


def sample() -> Chart:
    """Negative stems, a rectangle region, an explicit zero and products out of order: what the export must handle."""
    dims = {(1, 1): 1, (-2, 0): 1, (-2, 1): 2, (-1, 1): 1, (0, 0): 0}
    products = [Product("h1", (-2, 0, 0), (-1, 1, 0)), Product("h0", (-2, 0, 0), (-2, 1, 1))]
    return Chart("ko[-2]", 2, "nassau", 6, 2, -2, rows_rectangle(6, 2), dims, products)


def test_layout_lists_nonzero_dims_sorted_by_stem_then_s():
    data = to_json(sample())
    assert list(data) == ["module", "prime", "algorithm", "max_stem", "max_s", "min_degree", "rows", "ext",
                          "operations", "products"]
    assert data["operations"] == [{"op": f"h{i}", "shift": [2 ** i - 1, 1]} for i in range(4)]
    assert data["ext"] == [
        {"stem": -2, "s": 0, "dim": 1}, {"stem": -2, "s": 1, "dim": 2},
        {"stem": -1, "s": 1, "dim": 1}, {"stem": 1, "s": 1, "dim": 1},
    ]
    assert data["rows"] == [{"s": 0, "max_stem": 6}, {"s": 1, "max_stem": 5}, {"s": 2, "max_stem": 4}]
    assert data["products"] == [
        {"op": "h0", "source": [-2, 0, 0], "target": [-2, 1, 1]},
        {"op": "h1", "source": [-2, 0, 0], "target": [-1, 1, 0]},
    ]


def test_products_by_named_classes_round_trip(tmp_path):
    """A chart asked for c0 and h1 lines: the operations (and their order) survive the file, and a product whose
    target does not match its operation's shift is refused."""
    chart = Chart("S_2", 2, "nassau", 14, 4, 0, rows_rectangle(14, 4), {(0, 0): 1, (1, 1): 1, (8, 3): 1, (9, 4): 1},
                  [Product("h1", (8, 3, 0), (9, 4, 0)), Product("c0", (1, 1, 0), (9, 4, 0))],
                  operations={"c0": (8, 3), "h1": (1, 1)})
    path = tmp_path / "chart.json"
    write_json(chart, path)
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["operations"] == [{"op": "c0", "shift": [8, 3]}, {"op": "h1", "shift": [1, 1]}]
    assert [p["op"] for p in data["products"]] == ["c0", "h1"]
    assert to_json(from_json(data)) == data
    with pytest.raises(ValueError, match="does not map"):
        Chart("S_2", 2, "nassau", 14, 4, 0, rows_rectangle(14, 4), {(0, 0): 1, (8, 3): 1, (9, 4): 1},
              [Product("c0", (0, 0, 0), (9, 4, 0))], operations={"c0": (8, 3)})


def test_round_trip_through_a_file(tmp_path):
    chart = sample()
    path = tmp_path / "chart.json"
    write_json(chart, path)
    again = from_json(json.loads(path.read_text(encoding="utf-8")))
    assert to_json(again) == to_json(chart)
    assert set(again.products) == set(chart.products) and again.rows == chart.rows
    assert again.dims == {b: d for b, d in chart.dims.items() if d}
    assert os.listdir(tmp_path) == ["chart.json"]


def test_inconsistent_json_is_refused():
    data = to_json(sample())
    data["products"].append({"op": "h2", "source": [-2, 0, 0], "target": [-2, 1, 0]})
    with pytest.raises(ValueError, match="does not map"):
        from_json(data)


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    path = tmp_path / "chart.json"
    path.write_text("old", encoding="utf-8")

    def crash(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(atomic.os, "replace", crash)
    with pytest.raises(OSError, match="disk full"):
        write_json(sample(), path)
    assert path.read_text(encoding="utf-8") == "old"
    assert os.listdir(tmp_path) == ["chart.json"]


def test_the_file_is_written_under_a_temporary_name_first(tmp_path, monkeypatch):
    seen = []
    real_replace = os.replace

    def spy(src, dst):
        seen.append((os.path.dirname(src), os.path.basename(src), os.path.exists(dst)))
        real_replace(src, dst)

    monkeypatch.setattr(atomic.os, "replace", spy)
    write_json(sample(), tmp_path / "chart.json")
    [(directory, name, target_existed)] = seen
    assert directory == str(tmp_path) and name != "chart.json" and not target_existed


def test_written_files_get_ordinary_permissions(tmp_path) -> None:
    import os
    import stat

    from charts.atomic import write_text_atomic

    umask = os.umask(0o022)
    try:
        write_text_atomic(tmp_path / "out.svg", "<svg/>")
    finally:
        os.umask(umask)
    assert stat.S_IMODE((tmp_path / "out.svg").stat().st_mode) == 0o644
