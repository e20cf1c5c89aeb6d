"""The Python API: the same numbers and files as the CLI (which is a layer over it), a cheap `import nassau`, bad
input as the CLI's exceptions, --html as a CLI output, and the notebook's progress bar and display."""
from __future__ import annotations

import json
import subprocess
import sys
import types
from pathlib import Path

import pytest

import nassau
from algebra.module.spec import ModuleError
from nassau.cli.products import ERRORS
from nassau.engine.errors import EngineError
from nassau.store.save_dir import StoreError
from tests.helpers import run_cli

REGION = ["--stem", "20", "--max-s", "8"]


@pytest.fixture(scope="module")
def ext() -> nassau.Ext:
    return nassau.resolve("S_2", stem=20, max_s=8, threads=1, progress=False)


def test_api_gives_the_clis_chart_json_svg_and_page(ext, tmp_path: Path) -> None:
    files = {kind: tmp_path / f"chart.{kind}" for kind in ("json", "svg", "html")}
    out = run_cli("resolve", "S_2", *REGION, "--quiet", *(a for k, p in files.items() for a in (f"--{k}", str(p))))
    assert out.returncode == 0, out.stderr
    assert ext.to_json() == json.loads(files["json"].read_text(encoding="utf-8"))
    assert ext._repr_svg_() == ext.svg() == files["svg"].read_text(encoding="utf-8")
    assert ext.html() == files["html"].read_text(encoding="utf-8")
    assert ext.text().encode("utf-8") == out.stdout


def test_dims_generators_and_products_are_the_charts(ext) -> None:
    data = ext.to_json()
    assert ext.dims == {(e["stem"], e["s"]): e["dim"] for e in data["ext"]}
    assert ext.dims[(7, 1)] == 1 and ext.dims[(8, 3)] == 1 and (6, 1) not in ext.dims
    assert ext.generators == [(n, s, j) for (n, s), d in sorted(ext.dims.items()) for j in range(d)]
    assert {(p.op, p.source, p.target) for p in ext.products} == {
        (p["op"], tuple(p["source"]), tuple(p["target"])) for p in data["products"]}
    assert ("h1", (0, 0, 0), (1, 1, 0)) in {(p.op, p.source, p.target) for p in ext.products}
    assert "Ext of S_2 through stem 20, s <= 8" in repr(ext)


def test_repr_html_is_the_page_in_a_frame(ext) -> None:
    html = ext._repr_html_()
    assert html.startswith("<iframe srcdoc=") and "nassauChart" in html and "<script" not in html


def test_products_by_named_classes_as_the_clis(tmp_path: Path) -> None:
    path = tmp_path / "chart.json"
    assert run_cli("resolve", "S_2", *REGION, "--quiet", "--json", str(path), "--products", "h1", "c0").returncode == 0
    ext = nassau.resolve("S_2", stem=20, max_s=8, threads=1, products=["h1", "c0"], progress=False)
    assert ext.to_json() == json.loads(path.read_text(encoding="utf-8"))
    assert [o["op"] for o in ext.to_json()["operations"]] == ["h1", "c0"]


def test_load_reads_a_save_directory_as_the_chart_command_does(tmp_path: Path) -> None:
    save, path = tmp_path / "run", tmp_path / "chart.json"
    first = nassau.resolve("C2", max_t=14, max_s=5, threads=1, save_dir=save, progress=False)
    assert first.loaded == 0
    assert run_cli("chart", str(save), "--quiet", "--json", str(path)).returncode == 0
    loaded = nassau.load(save)
    assert loaded.to_json() == json.loads(path.read_text(encoding="utf-8")) == first.to_json()
    assert loaded.loaded == len(first.region.bidegrees())
    again = nassau.resolve("C2", max_t=14, max_s=5, threads=1, save_dir=save, progress=False)
    assert again.loaded == loaded.loaded and again.dims == first.dims


def test_bad_input_raises_what_the_cli_prints(tmp_path: Path) -> None:
    with pytest.raises(ModuleError, match="unknown module"):
        nassau.resolve("NoSuchModule", stem=5, progress=False)
    with pytest.raises(EngineError, match="threads must be at least 1"):
        nassau.resolve("S_2", stem=5, threads=0, progress=False)
    with pytest.raises(EngineError, match="below the module's bottom degree"):
        nassau.resolve("S_2", stem=-3, progress=False)
    with pytest.raises(StoreError):
        nassau.load(tmp_path)
    ext = nassau.resolve("S_2", stem=5, max_s=3, threads=1, products=["nosuchclass"], progress=False)
    with pytest.raises(ERRORS):
        ext.chart


@pytest.mark.parametrize("call, message", [
    (lambda: nassau.resolve("S_2", stem="10"), "stem must be an integer or None (got '10')"),
    (lambda: nassau.resolve("S_2", stem=True), "stem must be an integer or None (got True)"),
    (lambda: nassau.resolve("S_2", stem=10, max_s=3.0), "max_s must be an integer (got 3.0)"),
    (lambda: nassau.resolve("S_2", stem=10, threads="2"), "threads must be an integer or None (got '2')"),
    (lambda: nassau.resolve("S_2", stem=10, products="h0"), "products must be a list of names or None (got 'h0')"),
    (lambda: nassau.resolve(2, stem=10), "module must be a module name or the path of a module file, as a string"),
    (lambda: nassau.resolve("S_2", stem=10, save_dir=3), "save_dir must be a path or None (got 3)"),
    (lambda: nassau.load(None), "save_dir must be a path (got None)"),
])
def test_arguments_of_the_wrong_type_are_one_line(call, message: str) -> None:
    """The API checks its arguments' types before any work and raises the EngineError the CLI would print as one
    line, not a TypeError from deep inside."""
    with pytest.raises(EngineError) as raised:
        call()
    assert str(raised.value).startswith(message)


def test_import_is_cheap() -> None:
    """`import nassau` loads no numba, numpy or engine: the API is imported on first use."""
    code = "import sys, nassau; print(sorted(m for m in ('numba', 'numpy', 'nassau.api.request') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
    assert callable(nassau.resolve) and callable(nassau.load)


@pytest.mark.parametrize("args, needle", [
    (["resolve", "S_2", "--stem", "5", "--html", "/nonexistent/dir/chart.html"], "does not exist"),
    (["resolve", "S_2", "--stem", "5", "--html", "/"], "is a directory"),
])
def test_bad_html_path_is_one_line(args, needle) -> None:
    out = run_cli(*args)
    err = out.stderr.decode()
    assert out.returncode == 2 and "Traceback" not in err
    assert err.count("\n") == 1 and err.startswith("nassau: error:") and needle in err


def test_chart_command_writes_the_page(tmp_path: Path) -> None:
    save, page = tmp_path / "run", tmp_path / "chart.html"
    nassau.resolve("S_2", stem=10, max_s=4, threads=1, save_dir=save, progress=False)
    assert run_cli("chart", str(save), "--quiet", "--html", str(page)).returncode == 0
    assert page.read_text(encoding="utf-8") == nassau.load(save).html()


def test_in_a_notebook_progress_is_an_html_bar_updated_in_place(monkeypatch) -> None:
    """A stand-in IPython kernel: the bar is displayed once with a display_id, then updated, ending on the
    summary; nothing goes to stderr."""
    shown: list[str] = []

    class Handle:
        def update(self, obj) -> None:
            shown.append(obj.data)

    class ZMQInteractiveShell:
        pass

    def display(obj, display_id=False):
        assert display_id is True
        shown.append(obj.data)
        return Handle()

    ipython = types.ModuleType("IPython")
    ipython.get_ipython = ZMQInteractiveShell
    ipython_display = types.ModuleType("IPython.display")
    ipython_display.display = display
    ipython_display.HTML = lambda text: types.SimpleNamespace(data=text)
    ipython.display = ipython_display
    monkeypatch.setitem(sys.modules, "IPython", ipython)
    monkeypatch.setitem(sys.modules, "IPython.display", ipython_display)
    ext = nassau.resolve("S_2", stem=8, max_s=3, threads=1)
    total = len(ext.region.bidegrees())
    assert len(shown) >= 2 and all("<progress" in html for html in shown)
    assert f'value="0" max="{total}"' in shown[0]
    assert f'value="{total}" max="{total}"' in shown[-1] and f"{len(ext.generators)} generators" in shown[-1]


def test_a_bar_is_stopped_when_its_work_raises_and_only_then() -> None:
    from nassau.api.progress import Reporter

    stopped: list[int] = []

    class Bar(Reporter):
        def abort(self) -> None:
            stopped.append(self.total)

    with pytest.raises(KeyboardInterrupt), Bar(3, "x", quiet=True):
        raise KeyboardInterrupt
    with Bar(4, "y", quiet=True):
        pass
    assert stopped == [3]
