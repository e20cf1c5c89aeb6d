"""What a warm start of the command line must not pay for (nassau.cli.entry, fp.kernel_loading, nassau.cli.main):
checked in a fresh process by what it imported and what it broadcast, not by timing (benchmarks/bench_startup.py
times it)."""
from __future__ import annotations

import json
import os
import subprocess
import sys

RUN = """
import json, sys
from nassau.cli import entry

commands = entry.load()
from numba.core import event


class Count(event.Listener):
    n = 0

    def on_start(self, ev):
        Count.n += 1

    def on_end(self, ev):
        pass


event.register("numba:llvm_lock", Count())
code = commands.main(["resolve", "S_2", "--stem", "8", "--quiet", "--threads", "1"])
seen = {m: m in sys.modules for m in ("yaml", "email.parser")}
from numpy._core.multiarray import _get_madvise_hugepage
import yaml  # still importable after the command line hid it from numba's configuration
print(json.dumps({"code": code, "imported": seen, "llvm_lock_events": Count.n, "yaml": yaml.__name__,
                  "huge_pages": _get_madvise_hugepage()}))
"""


def test_a_warm_run_reads_no_yaml_no_metadata_and_broadcasts_no_llvm_lock_events() -> None:
    """S_2 through stem 8 loads its kernels (hundreds of calls into LLVM) without numba's "numba:llvm_lock" event
    around each call (a revert broadcasts thousands); numba's configuration is read without PyYAML (a revert imports
    it: 15-25 ms) and the version is not read from the package's metadata (its email parser: 25-45 ms). The run
    itself is unchanged: its chart, status 0, and yaml importable afterwards. numpy asks for no huge pages."""
    runs = [subprocess.run([sys.executable, "-c", RUN], capture_output=True, text=True, check=True).stdout
            for _ in range(2)]  # the first warms the kernel cache
    chart, line = runs[1].rsplit("\n", 2)[0], runs[1].splitlines()[-1]
    out = json.loads(line)
    assert out["code"] == 0 and chart == runs[0].rsplit("\n", 2)[0] and chart.splitlines()[-1].strip() == "·"
    assert out["imported"] == {"yaml": False, "email.parser": False} and out["yaml"] == "yaml"
    assert out["llvm_lock_events"] == 0
    assert out["huge_pages"] is False


def test_a_callers_choice_of_huge_pages_is_kept() -> None:
    """The entry point leaves numpy's huge pages off unless the caller set NUMPY_MADVISE_HUGEPAGE itself."""
    run = ("from nassau.cli import entry; entry.load(); "
           "from numpy._core.multiarray import _get_madvise_hugepage as h; print(h())")
    env = dict(os.environ, NUMPY_MADVISE_HUGEPAGE="1")
    out = subprocess.run([sys.executable, "-c", run], capture_output=True, text=True, check=True, env=env).stdout
    assert out.strip() == "True"
