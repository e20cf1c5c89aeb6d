"""The NASSAU_GPU* knobs: defaults, each knob's accepted values, clear errors naming the variable, and the
device choice each mode makes (auto/0/1) without a GPU."""
from __future__ import annotations

import numpy as np
import pytest
from test_gpu_support import gpu_env, twin_device  # noqa: F401  (fixture)

from gpu import config, counters, device, layout
from gpu.errors import GpuUnavailableError


def test_defaults_follow_the_reference() -> None:
    cfg = config.load({})
    assert cfg == config.GpuConfig(mode="auto", verify=False, debug=False, min_work=4_000_000,
                                   block_bytes=512 << 20, budget_bytes=4096 << 20, streams=1, rref_min=8192)


@pytest.mark.parametrize("env, field, value", [
    ({"NASSAU_GPU": "0"}, "mode", "0"),
    ({"NASSAU_GPU": "1"}, "mode", "1"),
    ({"NASSAU_GPU": " AUTO "}, "mode", "auto"),
    ({"NASSAU_GPU_VERIFY": "1"}, "verify", True),
    ({"NASSAU_GPU_VERIFY": "0"}, "verify", False),
    ({"NASSAU_GPU_DEBUG": "1"}, "debug", True),
    ({"NASSAU_GPU_MIN_WORK": "4e6"}, "min_work", 4_000_000),
    ({"NASSAU_GPU_MIN_WORK": "0"}, "min_work", 0),
    ({"NASSAU_GPU_BLOCK_MB": "64"}, "block_bytes", 64 << 20),
    ({"NASSAU_GPU_MEM_BUDGET_MB": "100"}, "budget_bytes", 100 << 20),
    ({"NASSAU_GPU_STREAMS": "4"}, "streams", 4),
    ({"NASSAU_GPU_RREF_MIN": "1024"}, "rref_min", 1024),
])
def test_each_knob(env: dict, field: str, value: object) -> None:
    assert getattr(config.load(env), field) == value


@pytest.mark.parametrize("name, raw", [
    ("NASSAU_GPU", "yes"), ("NASSAU_GPU", "2"),
    ("NASSAU_GPU_VERIFY", "true"), ("NASSAU_GPU_DEBUG", "2"),
    ("NASSAU_GPU_MIN_WORK", "lots"), ("NASSAU_GPU_MIN_WORK", "-1"), ("NASSAU_GPU_MIN_WORK", "1.5"),
    ("NASSAU_GPU_MIN_WORK", "inf"), ("NASSAU_GPU_MIN_WORK", "nan"),
    ("NASSAU_GPU_BLOCK_MB", "0"), ("NASSAU_GPU_MEM_BUDGET_MB", "-5"), ("NASSAU_GPU_STREAMS", "0"),
    ("NASSAU_GPU_RREF_MIN", "big"),
])
def test_bad_values_name_the_variable(name: str, raw: str) -> None:
    with pytest.raises(ValueError, match=name):
        config.load({name: raw})


def test_current_reads_the_environment_until_reset(gpu_env) -> None:
    gpu_env(streams=3)
    assert config.current().streams == 3
    gpu_env(streams=2)
    assert config.current().streams == 2


def test_mode_zero_never_uses_a_device(gpu_env, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(device, "_detect", lambda: pytest.fail("mode 0 must not look for a device"))
    gpu_env(mode=0)
    device.install(twin_device())
    assert device.current() is None


def test_mode_one_without_a_device_is_a_clear_error(gpu_env, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(device, "_detect", lambda: (None, "CuPy is not importable (ImportError)"))
    gpu_env(mode=1)
    with pytest.raises(GpuUnavailableError) as info:
        device.current()
    assert "NASSAU_GPU=1" in str(info.value) and "CuPy is not importable" in str(info.value)
    assert "\n" not in str(info.value)


def test_auto_without_a_device_falls_back(gpu_env, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    monkeypatch.setattr(device, "_detect", lambda: calls.append(1) or (None, "no CUDA device"))
    gpu_env(mode="auto")
    assert device.current() is None and device.current() is None
    assert calls == [1], "detection runs once per process, not per call"


def test_package_import_does_not_import_cupy() -> None:
    import subprocess
    import sys

    code = "import sys, gpu.products, gpu.rref, gpu.device; assert 'cupy' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_layout_restates_algebras_wire_format() -> None:
    from algebra.milnor import admissible_master as admissible
    from algebra.milnor import ppart

    assert layout.FIELD_SHIFT == tuple(int(x) for x in ppart.FIELD_SHIFT)
    assert layout.FIELD_BITS == tuple(int(x) for x in ppart.FIELD_BITS)
    assert layout.XI_DEGREES == tuple(int(x) for x in ppart.XI_DEGREES)
    assert (layout.MAX_LEN, layout.MAX_COLS, layout.MAX_DIAG) == (ppart.MAX_LEN, admissible.MAX_COLS,
                                                                  admissible.MAX_DIAG)
    assert np.array_equal(layout.FIELD_MASK, ppart.FIELD_MASK)
    assert layout.MAT_WIDTH >= layout.MAX_COLS + layout.MAX_DIAG


def test_debug_lines_go_to_stderr(gpu_env, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(counters, "_summary_registered", True)  # no exit summary from the test process
    gpu_env(debug=0)
    counters.debug("quiet")
    gpu_env(debug=1)
    counters.debug("loud")
    err = capsys.readouterr().err
    assert "quiet" not in err and "nassau.gpu: loud" in err
    assert counters.summary_line().startswith(counters.SUMMARY_PREFIX)
