"""Every CUDA source compiles to PTX for Hopper with nvcc, exactly as the device would get it (layout header
included), and defines the kernels the host code launches."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from gpu import source

NVCC = shutil.which("nvcc")


@pytest.mark.skipif(NVCC is None, reason="nvcc is not installed (the CUDA toolkit is needed to check PTX)")
@pytest.mark.parametrize("path", source.files(), ids=lambda p: p.name)
def test_compiles_to_ptx(path: Path, tmp_path: Path) -> None:
    src = tmp_path / path.name
    src.write_text(source.text(path))
    ptx = tmp_path / (path.stem + ".ptx")
    done = subprocess.run([NVCC, "-ptx", "-arch=sm_90", "-Werror", "all-warnings", str(src), "-o", str(ptx)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    text = ptx.read_text()
    for name in source.kernel_names(path):
        assert f".entry {name}(" in text, f"{name} missing from the PTX"


def test_the_kernels_the_host_launches_exist() -> None:
    defined = {name for path in source.files() for name in source.kernel_names(path)}
    assert {"milnor_products", "rref_search", "rref_combine", "rref_tables", "rref_coef", "rref_update"} <= defined
