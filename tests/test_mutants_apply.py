"""The mutation check's edits still apply: each pattern of each mutant matches its file exactly once (a refactor
that moves the code a mutant names would otherwise turn that mutant into a silent no-op), and the mutated Python
file still compiles (an edit that matches only part of a changed line leaves a syntax error, which pytest reports
as a collection error and the run as a survivor)."""
from __future__ import annotations

import re

import pytest

from tests.mutants import MUTANTS, ROOT


@pytest.mark.parametrize("mutant", [m for m in MUTANTS if m.path], ids=lambda m: m.name)
def test_every_mutant_edit_matches_once(mutant) -> None:
    text = (ROOT / mutant.path).read_text()
    for pattern, _ in mutant.edits:
        assert len(re.findall(pattern, text)) == 1, (mutant.path, pattern)


@pytest.mark.parametrize("mutant", [m for m in MUTANTS if m.path.endswith(".py")], ids=lambda m: m.name)
def test_every_mutated_python_file_compiles(mutant) -> None:
    text = (ROOT / mutant.path).read_text()
    for pattern, replacement in mutant.edits:
        text = re.sub(pattern, replacement, text)
    compile(text, mutant.path, "exec")
