"""The command line: help before any work, clear one-line errors with status 2, every output and subcommand,
threads. It runs in this process (tests.helpers.run_cli); test_resolve_charts runs `python -m nassau` once."""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

import nassau
from charts.seqsee import to_seqsee
from charts.svg import parse_svg
from charts.text import with_axes
from nassau.cli.main import build_parser
from tests.helpers import assert_one_line_error, golden, run_cli
from tests.test_charts_svg import drawing


def _commands() -> list[str]:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return list(sub.choices)


@pytest.mark.parametrize("command", [None, *_commands()])
def test_help_answers(command: str | None) -> None:
    """`nassau --help` and every command's --help print their usage (a help text argparse cannot format, such as
    an unescaped %, is a traceback)."""
    out = run_cli(*([command] if command else []), "--help")
    assert out.returncode == 0 and out.stdout.startswith(b"usage: nassau"), out.stderr


#: Options whose placeholder differs by command, and why.
PLACEHOLDERS_DIFFER = {"--output": "tensor writes a FILE, save-bruner a DIR of files"}


def test_an_option_has_one_name_and_placeholder_everywhere() -> None:
    """The same option has the same placeholder in every command (--threads THREADS, --stem N, ...), and no command
    gives one placeholder letter to two options (mahowald-invariant's --threads T beside --max-t T's T once)."""
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    placeholders: dict[str, set[str]] = {}
    for command, parser in sub.choices.items():
        letters: dict[str, str] = {}
        for action in parser._actions:
            if not action.option_strings or action.nargs == 0:
                continue
            option = max(action.option_strings, key=len)
            placeholder = str(action.metavar or action.dest.upper())
            placeholders.setdefault(option, set()).add(placeholder)
            if len(placeholder) == 1:
                assert letters.setdefault(placeholder, option) == option, (command, placeholder)
    assert {o: p for o, p in placeholders.items() if len(p) > 1 and o not in PLACEHOLDERS_DIFFER} == {}


def test_chart_draws_a_part_of_a_saved_run(tmp_path: Path) -> None:
    """chart SAVE_DIR --stem N --max-s S draws that part of the saved run, as resolve would print it; a part
    reaching beyond the run is one line."""
    save = tmp_path / "S_2"
    assert run_cli("resolve", "S_2", "--stem", "20", "--max-s", "6", "--save-dir", str(save), "--quiet").returncode == 0
    part = run_cli("chart", str(save), "--stem", "12", "--max-s", "4")
    assert part.returncode == 0 and part.stdout == run_cli("resolve", "S_2", "--stem", "12", "--max-s", "4").stdout
    assert run_cli("chart", str(save), "--max-t", "14").stdout == run_cli("resolve", "S_2", "--max-t", "14",
                                                                           "--max-s", "6").stdout
    assert_one_line_error(run_cli("chart", str(save), "--stem", "30"),
                          "holds a run through stem 20, s <= 6; stem 30, s <= 6 reaches beyond it")


def test_ext_writes_the_page_and_map_names_its_source(tmp_path: Path) -> None:
    page = tmp_path / "ext.html"
    assert run_cli("ext", "C2", "C2", "--stem", "8", "--quiet", "--html", str(page)).returncode == 0
    assert page.read_text().lstrip().lower().startswith("<!doctype html")
    assert b"usage: nassau map [-h]" in run_cli("map", "--help").stdout
    assert b"SOURCE TARGET" in run_cli("map", "--help").stdout.replace(b"\n", b" ").replace(b"  ", b" ")


def test_version() -> None:
    out = run_cli("--version")
    assert out.returncode == 0 and out.stdout.decode() == f"nassau {nassau.__version__}\n"


@pytest.mark.parametrize("args,needle", [
    (["resolve", "NoSuchModule", "--stem", "10"], "unknown module 'NoSuchModule'"),
    (["resolve", "s2", "--stem", "10"], "unknown module 's2': did you mean S_2?"),
    (["resolve", "S_2", "--stem", "-3"], "below the module's bottom degree"),
    (["resolve", "S_2", "--stem", "1000000"], "out of range"),
    (["resolve", "S_2", "--stem", "10", "--max-s", "-1"], "max s -1 is out of range"),
    (["resolve", "S_2", "--stem", "10", "--threads", "0"], "--threads must be at least 1"),
    (["ext", "C2", "C2", "--stem", "10", "--threads", "0"], "--threads must be at least 1"),
    (["product", "S_2", "--by", "h0=0,1,[1]", "--stem", "10", "--threads", "0"], "--threads must be at least 1"),
    (["secondary", "S_2", "--stem", "10", "--threads", "0"], "--threads must be at least 1"),
    (["differentials", "S_2", "--stem", "10", "--threads", "0"], "--threads must be at least 1"),
    (["unstable-chart", "S_2", "--stem", "10", "--threads", "0"], "--threads must be at least 1"),
    (["product", "S_2", "--by", "h0=0,1,[1]", "--stem", "10", "--json", "/"], "is a directory"),
    (["secondary", "S_2", "--stem", "10", "--json", "/nonexistent/dir/d2.json"], "does not exist"),
    (["resolve", "tmf2", "--stem", "10", "--algorithm", "nassau"], "does not apply to tmf2"),
    (["resolve", "C9", "--stem", "10", "--algorithm", "nassau"], "it is defined as a cofiber"),
    (["resolve", "C2v14", "--stem", "10", "--algorithm", "nassau"],
     "does not apply to C2v14: it is defined as a cofiber"),
    (["resolve", "S_2", "--stem", "10", "--json", "/nonexistent/dir/out.json"], "does not exist"),
    (["resolve", "S_2", "--stem", "10", "--svg", "/"], "is a directory"),
])
def test_bad_input_is_one_clear_line(args: list[str], needle: str) -> None:
    assert_one_line_error(run_cli(*args), needle)


@pytest.mark.parametrize("variable", ["NASSAU_PRODUCT_TABLES_MB", "NASSAU_Z4_MEMO_MB"])
def test_bad_product_table_budget(monkeypatch: pytest.MonkeyPatch, variable: str) -> None:
    monkeypatch.setenv(variable, "lots")
    assert_one_line_error(run_cli("resolve", "S_2", "--stem", "10"), f"{variable} must be a number")


@pytest.mark.parametrize("name", ["runs", "runs/", "./runs"])
def test_a_directory_is_not_a_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "runs").mkdir()
    assert_one_line_error(run_cli("resolve", name, "--stem", "5"), f"{name} is a directory, not a module file")


def test_malformed_module_file(tmp_path: Path) -> None:
    bad = tmp_path / "broken.json"
    bad.write_text('{"p": 2, "type": "finite dimensional module", "gens": {"x0": 0}, "actions": [')
    assert_one_line_error(run_cli("resolve", str(bad), "--stem", "5"), f"{bad}: malformed JSON")


def test_argument_errors_exit_2() -> None:
    out = run_cli("resolve", "S_2")
    assert out.returncode == 2 and b"--stem" in out.stderr and b"Traceback" not in out.stderr


def test_a_list_option_that_took_the_module_says_so() -> None:
    err = run_cli("resolve", "--stem", "5", "--products", "h0", "h1", "S_2").stderr.decode().strip().splitlines()[-1]
    assert err == ("nassau resolve: error: the following arguments are required: MODULE (--products reads every word "
                   "after it as one of its items: put MODULE before --products)")
    assert b"--products" not in run_cli("resolve", "--stem", "5").stderr.splitlines()[-1]


def test_json_export(tmp_path: Path) -> None:
    path = tmp_path / "chart.json"
    out = run_cli("resolve", "S_2", "--stem", "20", "--max-s", "8", "--json", str(path), "--quiet")
    assert out.returncode == 0, out.stderr
    data = json.loads(path.read_text())
    assert {k: data[k] for k in ("module", "prime", "algorithm", "max_stem", "max_s")} == {
        "module": "S_2", "prime": 2, "algorithm": "nassau", "max_stem": 20, "max_s": 8}
    ext = {(e["stem"], e["s"]): e["dim"] for e in data["ext"]}
    assert ext[(0, 8)] == 1 and ext[(8, 3)] == 1 and all(d > 0 for d in ext.values())
    ops = [p["op"] for p in data["products"]]
    assert [ops.count(h) for h in ("h0", "h1", "h2", "h3")] == [33, 16, 14, 10]
    assert {"op": "h1", "source": [0, 0, 0], "target": [1, 1, 0]} in data["products"]


def test_axes_on_request_and_the_references_bytes_otherwise() -> None:
    """--axes always adds them to a piped chart; auto (the default, stdout not a terminal here) and never print the
    reference's bytes."""
    args = ("resolve", "S_2", "--stem", "30", "--max-s", "11", "--quiet")
    assert run_cli(*args).stdout.decode() == golden("resolve_through_stem-S_2")
    assert run_cli(*args, "--axes", "never").stdout.decode() == golden("resolve_through_stem-S_2")
    assert run_cli(*args, "--axes", "always").stdout.decode() == with_axes(golden("resolve_through_stem-S_2"), 0)


def test_summary_line_when_not_a_terminal() -> None:
    out = run_cli("resolve", "C2", "--stem", "12")
    lines = out.stderr.decode().strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("C2:") and " s" in lines[0]
    assert run_cli("resolve", "C2", "--stem", "12", "--quiet").stderr == b""


@pytest.mark.parametrize("algorithm", ["standard", "nassau"])
def test_threads_do_not_change_any_output(tmp_path: Path, algorithm: str) -> None:
    results = []
    for k in (1, 2):
        save = tmp_path / f"save{k}"
        out = run_cli("resolve", "Joker", "--stem", "32", "--max-s", "10", "--algorithm", algorithm, "--threads",
                      str(k), "--json", str(tmp_path / f"c{k}.json"), "--save-dir", str(save), "--quiet")
        assert out.returncode == 0, out.stderr
        saved = {p.name: p.read_bytes() for p in (save / "bidegrees").glob("*.bin")}
        results.append((out.stdout, (tmp_path / f"c{k}.json").read_bytes(), saved))
    assert results[0] == results[1]


@pytest.mark.parametrize("algorithm", ["standard", "nassau"])
def test_products_print_the_references_filtration_one(algorithm: str) -> None:
    out = run_cli("products", "S_2", "--stem", "10", "--max-s", "5", "--algorithm", algorithm, "--quiet")
    assert out.returncode == 0, out.stderr
    assert out.stdout.decode() == golden(f"filtration_one-S_2{'-nassau' if algorithm == 'nassau' else ''}")


def test_max_t_computes_the_rectangle() -> None:
    out = run_cli("resolve", "S_2", "--max-t", "30", "--max-s", "11", "--quiet")
    assert out.returncode == 0, out.stderr
    assert out.stdout.decode() == golden("resolve-S_2-nassau")


def test_svg_and_seqsee_draw_the_references_chart(tmp_path: Path) -> None:
    svg, seqsee = tmp_path / "c.svg", tmp_path / "c.json"
    out = run_cli("resolve", "S_2", "--stem", "20", "--max-s", "8", "--svg", str(svg), "--seqsee", str(seqsee),
                  "--quiet")
    assert out.returncode == 0, out.stderr
    reference = golden("chart")  # sseq's SVG of S_2 through stem 20, s <= 8
    assert drawing(svg.read_text()) == drawing(reference)
    doc, expected = json.loads(seqsee.read_text()), to_seqsee(parse_svg(reference, "S_2"))
    assert (doc["nodes"], doc["edges"], doc["header"]["chart"]) == (expected["nodes"], expected["edges"],
                                                                     expected["header"]["chart"])


def test_the_cli_freezes_what_its_imports_built() -> None:
    """The start-up saving (nassau.cli.entry): the imports' objects are frozen out of the collector's reach, and the
    collector is running again for what the command itself makes; importing the library itself changes nothing."""
    code = ("import gc, nassau.cli.main; print(gc.get_freeze_count()); from nassau.cli import entry; entry.load(); "
            "print(gc.get_freeze_count(), gc.isenabled())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    before, frozen, enabled = out.stdout.split()
    assert int(before) == 0 and int(frozen) > 50_000 and enabled == "True"


def _one_line_usage_error(out: subprocess.CompletedProcess, needle: str) -> str:
    """A parser error as the CLI reports it: status 2, one line on stderr naming `needle`, no usage block."""
    err = out.stderr.decode()
    assert out.returncode == 2 and len(err.strip().splitlines()) == 1 and needle in err and "usage:" not in err, err
    return err.strip()


@pytest.mark.parametrize("args,needle", [
    (["resolve", "S_2", "--stme", "20"], "nassau resolve: error: unknown option --stme (did you mean --stem?)"),
    (["resolve", "S_2", "--stem", "5", "--max_s", "3"], "unknown option --max_s (did you mean --max-s?)"),
    (["resolve", "S_2", "--stem=5", "--thread=1", "--bogus"], "unknown option --bogus; `nassau resolve --help`"),
    (["resolv", "S_2", "--stem", "5"], "unknown command 'resolv' (did you mean resolve?)"),
    (["resolve", "S_2"], "one of the arguments --stem --max-t is required"),
    (["resolve", "S_2", "--stem", "five"], "argument --stem: invalid int value: 'five'"),
    (["resolve", "S_2", "--stem", "5", "surplus"], "unrecognized arguments: surplus"),
    (["--stme", "resolve"], "nassau: error: unknown option --stme"),
])
def test_a_parser_error_is_one_line_naming_the_word(args: list[str], needle: str) -> None:
    """argparse printed nine lines of usage and reported the missing --stem before the typo that caused it."""
    _one_line_usage_error(run_cli(*args), needle)


@pytest.mark.parametrize("command", _commands())
def test_every_command_names_an_unknown_option(command: str) -> None:
    _one_line_usage_error(run_cli(command, "--no-such-option"), f"nassau {command}: error: unknown option "
                                                                 "--no-such-option")


def test_an_output_no_file_can_be_made_in_is_refused_before_any_work() -> None:
    """/proc refuses new files even to root, whom os.access lets write anywhere: the run computed everything and
    then ended in a traceback, with no chart printed. Now one line and nothing else: no chart, no summary."""
    out = run_cli("resolve", "S_2", "--stem", "5", "--svg", "/proc/out.svg")
    assert out.stdout == b""
    assert_one_line_error(out, "cannot write /proc/out.svg: no file can be made in /proc")


def test_a_write_that_fails_late_is_one_line(tmp_path: Path) -> None:
    from nassau.cli.common import UserError, write_file

    with pytest.raises(UserError, match="cannot write .*: No such file or directory"):
        write_file(tmp_path / "gone" / "chart.svg", "<svg/>")


def test_chart_of_a_folder_that_is_not_there_says_so(tmp_path: Path) -> None:
    assert_one_line_error(run_cli("chart", str(tmp_path / "runs")), f"save directory {tmp_path / 'runs'} does not "
                                                                     "exist")
    (tmp_path / "file").write_text("x")
    assert_one_line_error(run_cli("chart", str(tmp_path / "file")), "is a file, not a save directory")
    assert_one_line_error(run_cli("chart", str(tmp_path)), "is not a nassau save directory")


@pytest.mark.parametrize("module,by,needle", [
    ("S_2", "x=20,4,[1,1]", "needs a vector of length 1 = dim Ext at (n=20, s=4), got 2"),
    ("C2", "x=20,4,[1,1]", "needs a vector of length 1 = dim Ext at (n=20, s=4), got 2"),
    ("C2", "x=20,4,[2]", "has an entry that is not below p = 2"),
    ("S_3", "x=10,2,[3]", "has an entry that is not below p = 3"),
])
def test_a_bad_by_class_is_refused_before_the_module_is_resolved(monkeypatch: pytest.MonkeyPatch, module: str,
                                                                   by: str, needle: str) -> None:
    """The class was checked only after the module's resolution (the long part) had finished."""
    from nassau.cli import products

    def resolve_module(*args, **kwargs):
        raise AssertionError("the module was resolved before its --by classes were checked")

    monkeypatch.setattr(products, "resolve_module", resolve_module)
    assert_one_line_error(run_cli("product", module, "--by", by, "--stem", "60"), needle)


def test_json_help_names_the_page_that_has_the_layout() -> None:
    assert b"docs/charts.md" in run_cli("resolve", "--help").stdout
    for command in _commands():
        assert b"see README" not in run_cli(command, "--help").stdout, command
