"""The project's own documents point only inside the repository: every relative link of a tracked Markdown file
(README.md, docs/, the packages' notes) names a file or folder of the repository, an anchor names a heading of its
page, and no tracked document or source file refers to the sibling directories a checkout has on one workstation
(`../shared/...`), which a user of the project does not have."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
OUTSIDE = re.compile(r"\.\./shared\b|/work/shared\b")


def tracked(*patterns: str) -> list[Path]:
    try:
        out = subprocess.run(["git", "ls-files", *patterns], cwd=ROOT, capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    return [ROOT / line for line in out.stdout.splitlines()]


def anchors(page: Path) -> set[str]:
    """GitHub's ids of a page's headings: lower case, punctuation but '-' and '_' dropped, spaces to '-'."""
    text = re.sub(r"^```.*?^```", "", page.read_text(encoding="utf-8"), flags=re.M | re.S)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in re.findall(r"^#+ (.*)$", text, re.M)}


def broken_links(page: Path, text: str | None = None) -> list[str]:
    """The relative links of a page (its text, or `text` as if it stood at `page`) that leave the repository, name
    nothing, or name a missing heading."""
    text = re.sub(r"^```.*?^```", "", page.read_text(encoding="utf-8") if text is None else text, flags=re.M | re.S)
    bad = []
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target):  # https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        resolved = (page.parent / path).resolve() if path else page
        if not resolved.is_relative_to(ROOT) or not resolved.exists():
            bad.append(target)
        elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
            bad.append(target)
    return bad


def test_every_relative_link_resolves_inside_the_repository():
    pages = [p for p in tracked("*.md") if not p.is_relative_to(ROOT / "tests" / "data")]
    assert ROOT / "README.md" in pages and ROOT / "docs" / "speed.md" in pages
    assert {p.relative_to(ROOT).as_posix(): broken_links(p) for p in pages if broken_links(p)} == {}


def test_the_check_catches_links_out_of_the_repository_and_to_missing_headings():
    text = "[d](../../shared/docs/DESIGN.md) [s](speed.md#no-such-heading) [ok](speed.md#start-up) [w](https://x.org)"
    bad = broken_links(ROOT / "docs" / "example.md", text)
    assert bad == ["../../shared/docs/DESIGN.md", "speed.md#no-such-heading"]


def test_no_document_or_source_refers_to_the_workstations_shared_directory():
    files = [p for p in tracked("*.md", "*.py", "*.toml", ".ci/*") if p.name != "test_docs_links.py"]
    assert [p.relative_to(ROOT).as_posix() for p in files if OUTSIDE.search(p.read_text(encoding="utf-8"))] == []
