"""The mutation check's edits still apply: each pattern of each mutant matches its file exactly once (a refactor
that moves the code a mutant names would otherwise turn that mutant into a silent no-op)."""
from __future__ import annotations

import re

import pytest

from tests.mutants import MUTANTS, ROOT


@pytest.mark.parametrize("mutant", [m for m in MUTANTS if m.path], ids=lambda m: m.name)
def test_every_mutant_edit_matches_once(mutant) -> None:
    text = (ROOT / mutant.path).read_text()
    for pattern, _ in mutant.edits:
        assert len(re.findall(pattern, text)) == 1, (mutant.path, pattern)
