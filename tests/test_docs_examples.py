"""The examples of README.md and docs/*.md run as written, in order, on a fresh checkout.

The rule: a fenced block opened with ```sh is a runnable shell example, one `nassau ...` command a line (a `#`
starts a comment); a block opened with ```python is a runnable Python example. Every other block is shown, not
run: ```bash for the installation commands (`.ci/run` runs the test one), ```text for usage synopses, cluster
set-ups and benchmarks that need the reference engine. The runnable examples of one page run in order in one fresh
directory, so an example may read what an earlier one on its page wrote (`runs/S_2`, `bruner_data`) and nothing
else.

Fast, in the default suite: every runnable shell line is a `nassau` command that the command line's parser accepts,
and every save directory or Bruner directory an example reads was written by an earlier example of its page. Slow:
each page's examples run, with this checkout's `nassau` and Python, and each must exit with status 0.
"""
from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from nassau.cli.main import build_parser

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.M | re.S)


@dataclass(frozen=True)
class Example:
    kind: str  # "sh" (one command) or "python" (a whole block)
    text: str


def examples(page: Path) -> list[Example]:
    """The page's runnable examples in order: each line of its ```sh blocks, each ```python block."""
    out = []
    for kind, body in FENCE.findall(page.read_text(encoding="utf-8")):
        if kind == "sh":
            out += [Example("sh", line.strip()) for line in body.splitlines() if line.strip()]
        elif kind == "python":
            out.append(Example("python", body))
    return out


def argv(line: str) -> list[str]:
    """The words of a shell command line, its comment and any redirection or pipe dropped."""
    words = shlex.split(line, comments=True)
    return next((words[:k] for k, w in enumerate(words) if w[0] in "<>|"), words)


def test_the_pages_have_runnable_examples():
    assert {p.name for p in PAGES} >= {"README.md", "commands.md", "products.md", "secondary.md"}
    kinds = [e.kind for e in examples(ROOT / "README.md")]
    assert kinds.count("sh") >= 5 and kinds.count("python") == 1


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_shell_example_is_a_nassau_command_the_parser_accepts(page, capsys):
    parser = build_parser()
    for example in examples(page):
        if example.kind != "sh":
            continue
        words = argv(example.text)
        assert words and words[0] == "nassau", f"{page.name}: not a nassau command: {example.text}"
        try:
            parser.parse_args(words[1:])
        except SystemExit:
            pytest.fail(f"{page.name}: the parser refuses {example.text}: {capsys.readouterr().err.strip()}")


def unwritten_reads(page: Path) -> list[str]:
    """The examples of a page that read a save directory or Bruner directory no earlier example of it wrote."""
    parser = build_parser()
    written: set[str] = set()
    problems = []
    for example in examples(page):
        if example.kind == "python":
            for call, path in re.findall(r'(nassau\.load\(|save_dir=)"([^"]+)"', example.text):
                if call == "save_dir=":
                    written.add(path)
                elif path not in written:
                    problems.append(f"nassau.load({path!r})")
            continue
        args = parser.parse_args(argv(example.text)[1:])
        reads = {"chart": "save_dir", "bruner": "directory"}.get(args.command)
        if reads and getattr(args, reads) not in written:
            problems.append(example.text)
        written |= {getattr(args, dest) for dest in ("save_dir", "output") if getattr(args, dest, None)}
    return problems


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_directory_an_example_reads_was_written_by_an_earlier_one(page):
    assert unwritten_reads(page) == []


def test_the_rule_catches_examples_that_read_what_nothing_wrote(tmp_path):
    """The README's examples of issue 35: Bruner's files and a saved run that no earlier example made."""
    page = tmp_path / "page.md"
    page.write_text("```sh\nnassau bruner bruner_data --stem 20\nnassau resolve S_2 --stem 9 --save-dir a\n"
                    "nassau chart a\nnassau chart runs/S_2 --html s2.html\n```\n", encoding="utf-8")
    assert unwritten_reads(page) == ["nassau bruner bruner_data --stem 20", "nassau chart runs/S_2 --html s2.html"]


@pytest.mark.slow
@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_the_examples_run_in_order_in_a_fresh_directory(page, tmp_path):
    """Each shell line as written by bash (this checkout's nassau first on PATH), each Python block by this Python."""
    bin_dir = str(Path(sys.executable).parent)
    env = {**os.environ, "PATH": bin_dir + os.pathsep + os.environ.get("PATH", ""), "PYTHONPATH": str(ROOT)}
    for k, example in enumerate(examples(page)):
        if example.kind == "sh":
            command = ["bash", "-c", example.text]
        else:
            script = tmp_path / f"example{k}.py"
            script.write_text(example.text, encoding="utf-8")
            command = [sys.executable, str(script)]
        result = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=1200)
        assert result.returncode == 0, f"{page.name}: {example.text}\nexit {result.returncode}\n{result.stderr[-3000:]}"
