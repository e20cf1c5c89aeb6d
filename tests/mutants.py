"""Mutation check: does the suite catch what it claims? (Not a test module: pytest does not collect it.)

For each mutant (one small plausible bug: a search/replace in one file) this copies a snapshot of the working
tree to a scratch directory, applies the edit, runs the tests that should catch it there, and prints a table
mutant | tests run | result. "killed" means those tests failed; every mutant here must be killed. A row
without edits is a condition the tests must pass under (pytest started with SIGINT ignored).

    .venv/bin/python tests/mutants.py              # every mutant
    .venv/bin/python tests/mutants.py nogil store  # those whose name contains one of the words
    .venv/bin/python tests/mutants.py --tests-at REV  # the same with the tests as they were at git revision REV

First the unmutated copy runs every test file named below; tests failing there are reported and deselected.
The runs share one fresh NUMBA_CACHE_DIR and one copy path, so only kernels whose sources a mutant changes
recompile (fp.kernel_cache keys compiled kernels by a hash of the fp and algebra sources, their place and times;
copytree keeps the times).
"""
from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COPY_IGNORE = shutil.ignore_patterns(".git", ".venv", "__pycache__", ".pytest_cache", ".hypothesis", "*.egg-info",
                                     "build", "dist", "bench-results")
TIMEOUT = 900


@dataclass(frozen=True)
class Mutant:
    name: str
    path: str
    #: (regular expression, replacement) pairs; each pattern must match exactly once in the file.
    edits: tuple[tuple[str, str], ...]
    tests: tuple[str, ...]
    #: Run pytest with SIGINT ignored, as a shell's background job or nohup starts it.
    sigint_ignored: bool = False


def literal(old: str, new: str) -> tuple[str, str]:
    return re.escape(old), new.replace("\\", "\\\\")


MUTANTS = [
    Mutant("calibration: timed while the first run's helper compiles", "nassau/cost/calibration.py",
           (literal("    tables_ready()\n", ""),),
           ("tests/test_cost.py::test_a_calibration_waits_for_the_first_runs_compile_helper",)),
    Mutant("motivic save: an older directory's kernel vectors are not read (computed again)",
           "nassau/store/motivic_save.py",
           (literal("        if len(basis[0]) != len(pivots):\n", "        if True:\n"),),
           ("tests/test_motivic_resume.py::"
            "test_kernels_are_saved_factored_and_an_older_directory_of_their_vectors_still_resumes",)),
    Mutant("motivic save: a factored kernel's rows checked against every generator of its degree",
           "nassau/store/motivic_save.py",
           (literal("fs.dimension(t, fs.gens_below(t))", "fs.dimension(t)"),),
           ("tests/test_motivic_cluster.py",)),
    Mutant("motivic cluster: a step computes the kernel below it again instead of reading the saved one",
           "nassau/store/motivic_save.py",
           (literal("res.cycles[(s - 1, t)] = self._cycles(res, s - 1, t)",
                    "res.cycles[(s - 1, t)] = kernel_cycles(res, s - 1, t)"),),
           ("tests/test_motivic_cluster.py",)),
    Mutant("motivic cluster: a worker runs the classical step", "nassau/store/cluster.py",
           (literal("if algorithm in (MOTIVIC, QUOTIENT) else _WorkerRun", "if False else _WorkerRun"),),
           ("tests/test_motivic_cluster.py",)),
    Mutant("first run: the table filler multiplies with literal zeros (a copy of multiply_into)",
           "algebra/milnor/product_tables.py",
           (literal("multiply_into(bits, zero, zero,", "multiply_into(bits, 0, 0,"),),
           ("tests/test_warmup.py::test_the_helper_compiles_the_reductions_first_and_the_product_kernel_once",)),
    Mutant("first run: a table grows by a slice assignment", "algebra/milnor/table_layout.py",
           (literal("""        for i in range(used):  # a loop, not grown[:used] = entries: a slice assignment compiles numba's shape-
            grown[i] = entries[i]  # mismatch message (string formatting, 2.0 s of a first run)""",
                    "        grown[:used] = entries"),),
           ("tests/test_warmup.py::test_the_helper_compiles_the_reductions_first_and_the_product_kernel_once",
            "tests/test_product_tables.py", "tests/test_product_tables_odd.py")),
    Mutant("first run: the helper leaves the small reductions to the main process", "algebra/milnor/compile_helper.py",
           (literal("    image, preimages, _, _ = small_kernel(np.eye(2, dtype=np.uint64), 2)\n", ""),
            literal("""    QuasiInverse(image, preimages, 2).correct(""", """    if False: QuasiInverse(image, preimages, 2).correct(""")),
           ("tests/test_warmup.py",)),
    Mutant("motivic: a step builds d_s's whole matrix again", "nassau/engine/motivic.py",
           (literal("coords, weights, ncols = _matrix(res, s, t, ngens, cycles.pivots)",
                    "whole, weights, ncols = _matrix(res, s, t, ngens); "
                    "coords = res.field.gather(whole, cycles.pivots)"),),
           ("tests/test_motivic.py",)),
    Mutant("motivic: products made in the blocks that hold no pivot", "nassau/engine/motivic.py",
           (literal("ncols=len(columns), target_gens=blocks)", "ncols=len(columns))"),),
           ("tests/test_motivic.py",)),
    Mutant("transpose: a block's bits left in their order", "fp/transpose.py",
           (literal("x = _reverse_bits(block[k])", "x = block[k]"),),
           ("tests/test_fp_transpose.py", "tests/test_fp_left_kernel.py")),
    Mutant("entry: numpy asks for huge pages again", "nassau/cli/entry.py",
           (literal('setdefault("NUMPY_MADVISE_HUGEPAGE", "0")', 'setdefault("NUMPY_MADVISE_HUGEPAGE", "1")'),),
           ("tests/test_startup.py",)),
    Mutant("motivic: new generators against rows of higher weight too", "nassau/engine/motivic.py",
           (literal("mine = np.nonzero(weights == w)[0]", "mine = np.nonzero(weights >= w)[0]"),),
           ("tests/test_motivic.py",)),
    Mutant("motivic: the factored kernel solved from the lowest weight", "nassau/engine/motivic.py",
           (literal("for w in np.unique(cycles.weights)[::-1]:", "for w in np.unique(cycles.weights):"),),
           ("tests/test_motivic.py",)),
    Mutant("motivic: the new generators left out of the kernel", "nassau/engine/motivic.py",
           (literal("return out | field_.scatter(field_.gather(residual, self.new), np.arange(n, width), width)",
                    "return out"),),
           ("tests/test_motivic.py",)),
    Mutant("motivic: a weight's independent rows taken from the front", "fp/left_kernel.py",
           (literal("        i = n - 1 - r\n", "        i = r\n"),),
           ("tests/test_fp_left_kernel.py",)),
    Mutant("motivic: a stem-shaped region resolved as it is", "nassau/engine/motivic.py",
           (literal("return Region(max_s=region.max_s, min_degree=region.min_degree, max_t=region.t_limit)",
                    "return region"),),
           ("tests/test_motivic.py",)),
    Mutant("motivic: the left kernel read from A^T's columns in the given order, not reversed", "fp/left_kernel.py",
           (literal("= n - 1 - np.arange(n, dtype=np.int64)", "= np.arange(n, dtype=np.int64)"),),
           ("tests/test_fp_left_kernel.py",)),
    Mutant("motivic: a run resolves one internal degree too few", "nassau/api/motivic.py",
           (literal("max_t=region.t_limit)", "max_t=region.t_limit - 1)"),),
           ("tests/test_motivic_cli.py",)),
    Mutant("motivic: tau_i's weight off by one index", "algebra/milnor/motivic_weight.py",
           (literal("_TAU = np.array([(1 << (i - 1)) - 1", "_TAU = np.array([(1 << i) - 1"),),
           ("tests/test_motivic.py",)),
    Mutant("motivic: a torsion class read as tau-free", "nassau/products/motivic_ext.py",
           (literal("                j = low_of.get(i)\n", "                j = None\n"),),
           ("tests/test_motivic.py",)),
    Mutant("motivic page: every product line dashed, tau multiple or not", "charts/assets/chart.js",
           (literal("powers[e / 2] > 0", "powers[e / 2] >= 0"),),
           ("tests/test_motivic_page.py",)),
    Mutant("motivic: tau-torsion orders one too long", "nassau/products/motivic_ext.py",
           (literal("else int(self.weights[i] - self.weights[j]))",
                    "else int(self.weights[i] - self.weights[j]) + 1)"),),
           ("tests/test_motivic_ctau.py",)),
    Mutant("motivic: a trigrading's generators indexed in the resolution's order, tau-free not first",
           "nassau/products/motivic_ext.py",
           (literal("found.append((int(self.weights[i]), -1 if torsion is None else torsion, i, torsion))",
                    "found.append((int(self.weights[i]), 0, i, torsion))"),),
           ("tests/test_motivic_cli.py",)),
    Mutant("motivic: the text names a product's target without its index", "nassau/api/motivic.py",
           (literal('return f"({c.stem}, {c.s}, {c.weight})[{c.index}]"', 'return f"({c.stem}, {c.s}, {c.weight})"'),),
           ("tests/test_motivic_cli.py",)),
    Mutant("motivic: h_i x read with one power of tau too many", "nassau/products/motivic_ext.py",
           (literal("out.append((i, int(self.weights[i] - u)))", "out.append((i, int(self.weights[i] - u) + 1))"),),
           ("tests/test_motivic_iwx.py",)),
    Mutant("store: BLAKE2b check deleted", "nassau/store/save_dir.py",
           (literal('        if hashlib.blake2b(body, digest_size=_DIGEST).digest() != digest:\n'
                    '            raise ValueError("checksum mismatch (corrupt or truncated)")\n', ""),),
           ("tests/test_store.py",)),
    Mutant("device RREF stops after CHECK_EVERY panels", "gpu/rref.py",
           (literal("if (w + 1) % CHECK_EVERY == 0 and int(dev.download(state[:1])[0]) == m:",
                    "if (w + 1) % CHECK_EVERY == 0:"),),
           ("tests/test_gpu_rref.py",)),
    Mutant("device lock: readers exclusive", "gpu/lock.py",
           (literal("while self._writer or self._writers_waiting:", "while self._writer or self._writers_waiting "
                    "or self._readers:"),),
           ("tests/test_gpu_concurrency.py",)),
    Mutant("products: forbid ignored by run_batch", "algebra/milnor/products.py",
           (literal("NO_FORBID if forbid is None else forbid", "NO_FORBID"),),
           ("tests/test_algebra_products.py",)),
    Mutant("nassau step: blocks built without forbid", "nassau/engine/nassau_step.py",
           (literal("forbid=sub.forbid(sig)", "forbid=None"),),
           ("tests/test_batching.py",)),
    Mutant("nassau step: signatures with zero part not skipped", "nassau/engine/nassau_step.py",
           ((r"\n[ ]+if not f\.any_in\(rem, cols\):\n[ ]+pieces\.drop\(i\)\n[ ]+continue\n", "\n"),),
           ("tests/test_batching.py",)),
    Mutant("prefetch: idle workers never help", "nassau/engine/scheduler.py",
           (literal("if board is not None and board.has_work():", "if False:"),),
           ("tests/test_prefetch.py",)),
    Mutant("prefetch: a dropped piece still runs", "nassau/engine/prefetch.py",
           (literal("                COUNTERS[\"dropped\"] += 1\n            self._state[i] = _GONE\n",
                    "                COUNTERS[\"dropped\"] += 1\n                self._left += 1\n"),),
           ("tests/test_prefetch.py",)),
    Mutant("m4ri: a cold cache compiles M4RI for mid-size inputs", "fp/m4ri.py",
           (literal("or _cold_gauss(m, ncols, nw):", ":"),),
           ("tests/test_fp_row_reduce.py",)),
    Mutant("m4ri: the small kernel counts the padding columns into the image", "fp/m4ri.py",
           (literal("while rank < m and pivots[rank] < ncols:", "while rank < m and pivots[rank] < wa * 64 + 1:"),),
           ("tests/test_batching.py",)),
    Mutant("m4ri: the small kernel copies its kernel rows by slicing", "fp/m4ri.py",
           (literal("            for w in range(wa, wide):\n                kernel[r - rank, w - wa] = aug[r, w]\n",
                    "            kernel[r - rank, :] = aug[r, wa:]\n"),),
           ("tests/test_fp_row_reduce.py",)),
    Mutant("[A | I]: reductions built as an Augmented again", "fp/augmented.py",
           (literal("    split = f.image_and_kernel(a, ncols)\n", "    split = None\n"),),
           ("tests/test_batching.py",)),
    Mutant("[A | I]: quasi-inverses built as an Augmented again", "fp/augmented.py",
           (literal("    split = f.quasi_inverse(a, ncols)\n", "    split = None\n"),),
           ("tests/test_batching.py",)),
    Mutant("m4ri: the small kernel's preimages taken from the A part", "fp/m4ri.py",
           (literal("                preimages[r, w - wa] = aug[r, w]\n",
                    "                preimages[r, w - wa] = aug[r, w - wa]\n"),),
           ("tests/test_batching.py",)),
    Mutant("engine: a cofiber's M resolved by the standard algorithm again", "nassau/engine/resolve.py",
           (literal("    base_algorithm = \"standard\" if nassau_qualifies(module, as_cofiber=False) else \"nassau\"\n",
                    "    base_algorithm = \"standard\"\n"),),
           ("tests/test_module_charts.py",)),
    Mutant("kernel cache: key blind to the subpackages' sources", "fp/kernel_cache.py",
           (literal('for f in sorted((root / pkg).rglob("*.py")):', 'for f in sorted((root / pkg).glob("*.py")):'),),
           ("tests/test_warmup.py",)),
    Mutant("warmup: the helper skips the matrix product", "algebra/milnor/compile_helper.py",
           (literal("    gf2_matmul(a, np.zeros((192, 2), dtype=np.uint64), 192, 128, parallel=False)\n", ""),),
           ("tests/test_warmup.py",)),
    Mutant("resolution: kept kernel never found", "nassau/engine/resolution.py",
           (literal("return self.kernels.pop((s, t), None)", "return None"),),
           ("tests/test_batching.py",)),
    Mutant("engine: standard steps keep no kernel", "nassau/engine/resolve.py",
           (literal("keep=region.contains(s + 1, t) and not res.is_done(s + 1, t)", "keep=False"),),
           ("tests/test_batching.py",)),
    Mutant("products: batch kernel holds the GIL", "algebra/milnor/products.py",
           (literal("@njit(cache=True, nogil=True)\ndef _batch_kernel", "@njit(cache=True)\ndef _batch_kernel"),),
           ("tests/test_algebra_products.py",)),
    Mutant("scheduler: threads ignored", "nassau/engine/scheduler.py",
           (literal("if threads <= 1:", "if True:"),),
           ("tests/test_scheduler.py",)),
    Mutant("scheduler: only a job's first dependency counts", "nassau/engine/scheduler.py",
           (literal("inside = [d for d in deps(*job) if d in pending]",
                    "inside = [d for d in deps(*job) if d in pending][:1]"),),
           ("tests/test_scheduler.py",)),
    Mutant("scheduler: a failed job's error is dropped", "nassau/engine/scheduler.py",
           (literal('                        state["error"] = exc\n', '                        pass\n'),),
           ("tests/test_scheduler.py",)),
    Mutant("scheduler: a cycle on one worker waits forever", "nassau/engine/scheduler.py",
           (literal('if not state["running"]:', 'if False:'),),
           ("tests/test_scheduler.py",)),
    Mutant("matmul: zero passes of A not skipped", "fp/matmul.py",
           (literal("                if x == 0:\n                    continue\n", ""),),
           ("tests/test_fp_matmul.py",)),
    Mutant("matmul: never threaded", "fp/matmul.py",
           (literal("parallel = use_threads(m, PARALLEL_MIN_ROWS)", "parallel = False"),),
           ("tests/test_fp_matmul.py",)),
    Mutant("subalgebra: signatures stop at the second coordinate", "algebra/milnor/subalgebra.py",
           (literal("bounds = [(1 << h) for h in self.profile]", "bounds = [(1 << h) for h in self.profile[:2]]"),),
           ("tests/test_resolve_charts.py::test_nassau_over_a2_equals_standard",)),
    Mutant("modules: operations from the bottom cell to the top never derived", "algebra/module/finite.py",
           (literal("    for e in range(1, hi - lo + 1):\n", "    for e in range(1, hi - lo):\n"),),
           ("tests/test_algebra_modules.py",)),
    Mutant("Ctrl-C test, pytest started with SIGINT ignored (must pass)", "", (),
           ("tests/test_store.py::test_ctrl_c_exits_cleanly_and_keeps_the_save",), sigint_ignored=True),
    Mutant("cli: products prints the chart", "nassau/cli/resolve.py",
           (literal('lines_only = args.command == "products"', 'lines_only = args.command == "product"'),),
           ("tests/test_cli.py",)),
    Mutant("cli: --seqsee written only with --json", "nassau/cli/common.py",
           (literal("    if args.seqsee:\n", "    if args.seqsee and args.json:\n"),),
           ("tests/test_cli.py",)),
    Mutant("cli: --max-t one degree short", "nassau/cli/resolve.py",
           (literal("    req = request(args.module, args.stem, max_t=args.max_t,",
                    "    req = request(args.module, args.stem, max_t=args.max_t and args.max_t - 1,"),),
           ("tests/test_cli.py",)),
    Mutant("cli: SVG drawn from the chart without product lines", "nassau/cli/common.py",
           (literal("write_file(args.svg, to_svg(chart))",
                    "write_file(args.svg, to_svg(ext._dims_only if isinstance(ext, Ext) else chart))"),),
           ("tests/test_cli.py",)),
    Mutant("cli: the terminal's chart not cut to the terminal's width", "nassau/cli/common.py",
           (literal("shutil.get_terminal_size().columns if terminal else None", "None"),),
           ("tests/test_terminal.py",)),
    Mutant("charts: a chart as wide as the terminal cut into panels", "charts/text.py",
           (literal('max(map(len, whole.split("\\n"))) <= width', 'max(map(len, whole.split("\\n"))) < width'),),
           ("tests/test_charts_text.py",)),
    Mutant("start-up: numba's configuration reads PyYAML", "nassau/cli/entry.py",
           (literal('hidden = "yaml" not in sys.modules and "numba" not in sys.modules', "hidden = False"),),
           ("tests/test_startup.py",)),
    Mutant("start-up: numba's LLVM-lock events kept", "fp/kernel_loading.py",
           (literal("    _llvm_lock_unobserved()\n    return True\n", "    return True\n"),),
           ("tests/test_startup.py",)),
    Mutant("start-up: the version read from the metadata on every run", "nassau/cli/main.py",
           (literal("    sub = parser.add_subparsers(",
                    "    __import__('importlib.metadata').metadata.version('nassau')\n    sub = parser.add_subparsers("),),
           ("tests/test_startup.py",)),
    Mutant("cli: an unknown option left to argparse's own message", "nassau/cli/main.py",
           (literal("        if unknown is not None:\n", "        if False:\n"),),
           ("tests/test_cli.py",)),
    Mutant("cli: an output's directory checked by os.access, not by making a file there", "nassau/cli/common.py",
           (literal("fd, probe = tempfile.mkstemp(dir=parent,",
                    "fd, probe = tempfile.mkstemp(dir=tempfile.gettempdir(),"),),
           ("tests/test_cli.py",)),
    Mutant("cli: --by classes checked only after the module's resolution", "nassau/cli/products.py",
           (literal("    unit = _checked_unit(args, named)\n", "    unit = None\n"),),
           ("tests/test_cli.py",)),
    Mutant("kernels: profile index map ignored", "algebra/milnor/kernels.py",
           (literal("return index_map[map_offset[deg] + rank] if index_map.shape[0] > 0 else rank", "return rank"),),
           ("tests/test_algebra_products.py",)),
    Mutant("bits: pext_soft ignores mask bits 32-63, host without BMI2", "fp/bits.py",
           (literal("    while m:\n        if x & m & (~m + _ONE):",
                    "    while m & np.uint64(0xFFFFFFFF):\n        if x & m & (~m + _ONE):"),
            literal('HAS_BMI2 = bool(llvm.get_host_cpu_features().get("bmi2", False))', "HAS_BMI2 = False")),
           ("tests/test_fp_masked.py", "-k", "pext")),
    Mutant("nassau step: corrections not added to x", "nassau/engine/nassau_step.py",
           ((r"\n([ ]+)x = f\.subtract\(x, ", r"\n\1_ = (x, "),),
           ("tests/test_resolve_charts.py::test_differentials_match_the_references_choices",
            "tests/test_nassau_odd.py::test_nassau_equals_standard")),
    Mutant("odd products: the signature filter keeps the other Q-parts", "algebra/milnor/odd_kernels.py",
           (literal("(t_e[a] & keep[0]) != keep[1]", "(t_e[a] & keep[0]) == keep[1] and keep[0] != 0"),),
           ("tests/test_nassau_odd.py::test_signature_filter_keeps_exactly_the_block",)),
    Mutant("odd product tables: an entry's coefficient read as 1", "algebra/milnor/products.py",
           (literal("term_coef[q] * ((e >> rank_bits) + 1)", "term_coef[q]"),),
           ("tests/test_product_tables_odd.py",)),
    Mutant("odd small quasi-inverse: rows with a pivot in I kept", "fp/modp.py",
           (literal("while k < pivots.shape[0] and pivots[k] < ncols:", "while k < pivots.shape[0] and pivots[k] <= ncols:"),),
           ("tests/test_nassau_odd.py::test_small_quasi_inverse_is_the_augmented_ones",
            "tests/test_fp_modp.py::test_a_small_image_and_kernel_is_the_augmented_ones")),
    Mutant("odd nassau: signatures enumerated in the reverse digit order", "algebra/milnor/odd_subalgebra.py",
           (literal("        value = [0] * len(digits)\n", "        digits.reverse()\n        value = [0] * len(digits)\n"),),
           ("tests/test_nassau_odd.py::test_nassau_equals_standard",)),
    Mutant("odd nassau: signature classes mod p, not mod p^h", "algebra/milnor/odd_subalgebra.py",
           (literal("(r % np.uint64(self.p**h))", "(r % np.uint64(self.p))"),),
           ("tests/test_nassau_odd.py",)),
    Mutant("odd nassau: the vanishing line without B's top class", "algebra/milnor/odd_subalgebra.py",
           (literal("return t - self.top_degree > self.slope * s", "return t > self.slope * s"),),
           ("tests/test_nassau_odd.py",)),
    Mutant("product tables: never read", "algebra/milnor/product_tables.py",
           (literal("    return tid if tid < ntables else -1", "    return -1"),),
           ("tests/test_product_tables.py",)),
    Mutant("product tables: a term past the first word lands one column late", "algebra/milnor/product_tables.py",
           (literal("ranks, used = append(ranks, used, w * 64 + ctz(x))",
                    "ranks, used = append(ranks, used, w * 64 + ctz(x) + (w > 0))"),),
           ("tests/test_product_tables.py",)),
    Mutant("product tables: the last row of a table loses its terms", "algebra/milnor/product_tables.py",
           (literal("        row_off[base + dim_n] = used - first\n",
                    "        row_off[base + dim_n] = row_off[base + dim_n - 1] if dim_n else 0\n"),),
           ("tests/test_product_tables.py",)),
    Mutant("product tables: every term of a run reads the table ensure found for its first",
           "algebra/milnor/products.py",
           (literal("            tid = key_tid[counts[0]]\n            counts[0] += 1\n",
                    "            tid = key_tid[counts[0]]\n"),),
           ("tests/test_product_tables.py",)),
    Mutant("Nassau corrections: rem not cancelled", "fp/quasi_inverse.py",
           (literal("                    rem[v, u] ^= image[i, u]\n", "                    pass\n"),),
           ("tests/test_fp_augmented.py",)),
    Mutant("Nassau corrections: a signature's part tested on its first column only", "fp/masked.py",
           (literal("    for c in mask:\n", "    for c in mask[:1]:\n"),),
           ("tests/test_fp_augmented.py", "tests/test_batching.py")),
    Mutant("prefetch: a closed Prefetch keeps its pieces", "nassau/engine/prefetch.py",
           (literal("            self._tasks = [None] * len(self._tasks)", "            pass"),),
           ("tests/test_prefetch.py",)),
    Mutant("finitely presented: P^s_t read as 2^t in place s", "algebra/module/finitely_presented.py",
           (literal("tuple([0] * (int(m.group(2)) - 1) + [1 << int(m.group(1))])",
                    "tuple([0] * (int(m.group(1)) - 1) + [1 << int(m.group(2))])"),),
           ("tests/test_module_kinds.py::test_a_chart_that_depends_on_p_s_t",)),
    Mutant("finitely presented: P^s_t read as s + 1 in place t", "algebra/module/finitely_presented.py",
           (literal("[1 << int(m.group(1))])", "[int(m.group(1)) + 1])"),),
           ("tests/test_module_kinds.py::test_p_s_t_is_the_milnor_element_with_2_to_the_s_in_place_t",)),
    Mutant("clear_bottom: min rounded by the residue of -min", "algebra/module/projective_space.py",
           (literal("bottom += (-(bottom + 1)) % 8", "bottom += 7 - (-bottom) % 8"),),
           ("tests/test_module_kinds.py::test_clear_bottom_for_every_residue_of_min",)),
    Mutant("clear_bottom: min rounded right for negative min only", "algebra/module/projective_space.py",
           (literal("bottom += (-(bottom + 1)) % 8", "bottom += abs(bottom + 1) % 8"),),
           ("tests/test_module_kinds.py::test_clear_bottom_for_every_residue_of_min",)),
    Mutant("clear_bottom: m + 9 kept", "algebra/module/projective_space.py",
           (literal("CLEARED_ABOVE_BOTTOM = (1, 2, 3, 5, 9)", "CLEARED_ABOVE_BOTTOM = (1, 2, 3, 5)"),),
           ("tests/test_module_kinds.py::test_clear_bottom_for_every_residue_of_min",)),
    Mutant("tensor: a Cartan block's products laid out right factor major", "algebra/module/tensor.py",
           (literal('np.einsum("kab,kcd->kacbd", tl[k1], tr[k2])', 'np.einsum("kab,kcd->kcadb", tl[k1], tr[k2])'),),
           ("tests/test_module_kinds.py::test_two_cell_blocks_act_by_the_cartan_formula",)),
    Mutant("tensor: names within a block right factor major", "algebra/module/tensor.py",
           (literal("a, b = divmod(k - offset, dr)", "b, a = divmod(k - offset, dl)"),),
           ("tests/test_module_kinds.py::test_two_cell_blocks_are_written_in_the_reference_order",)),
    Mutant("store: bidegrees written in place, not through a temporary name", "nassau/store/save_dir.py",
           (literal('tmp = path.with_name(f".{path.name}.tmp-{_HOST}-{os.getpid()}")', "tmp = path"),),
           ("tests/test_store.py::test_a_write_killed_half_way_leaves_no_file_at_the_final_name",
            "tests/test_store.py::test_a_reader_never_sees_a_short_file")),
    Mutant("page: shading starts a cell after each row's last computed stem", "charts/assets/chart.js",
           (literal("const from = Math.max(last, F.min_n - 1);", "const from = Math.max(last + 1, F.min_n - 1);"),),
           ("tests/test_chart_page.py::test_the_cells_beyond_each_row_are_shaded_and_no_others",)),
    Mutant("page: shading drawn a row off", "charts/assets/chart.js",
           (literal("ctx.fillRect(chartX(from + 0.5), chartY(s + 0.5),", "ctx.fillRect(chartX(from + 0.5), chartY(s - 0.5),"),),
           ("tests/test_chart_page.py::test_the_cells_beyond_each_row_are_shaded_and_no_others",)),
    Mutant("svg: the top row unlabelled", "charts/svg.py",
           (literal("if s % 4 == 0 or s == frame.max_s:", "if s % 4 == 0:"),),
           ("tests/test_charts_svg.py::test_the_top_row_and_the_last_stem_are_labelled",)),
    Mutant("motivic svg: the torsion colours drawn as line samples", "charts/motivic_svg.py",
           (literal('torsion_colour(t), "dot")', 'torsion_colour(t), "line")'),),
           ("tests/test_charts_svg.py::test_the_motivic_legend_shows_dots_for_the_colours_and_the_dashed_tau_multiples",)),
    Mutant("svg: the legend's room guessed at 8 px a character", "charts/svg.py",
           (literal("max(text_width(name, 12) for name in legend)", "8 * max(len(name) for name in legend)"),),
           ("tests/test_charts_render.py::test_the_canvas_fits_the_drawing",)),
    Mutant("page 3: the page draws E3 alone, without E2 and its d2", "nassau/api/ext.py",
           (literal("chart = self.e2_chart if self.with_d2 and self.e2_chart.d2 else self.chart", "chart = self.chart"),),
           ("tests/test_secondary.py::test_the_e3_page_draws_e2_beside_it_and_every_file_names_its_page",)),
    Mutant("page 3: the E3 chart is titled E2", "charts/pages.py",
           (literal('dict(chart.rows), dims, products, dict(chart.operations), page="E3")',
                    "dict(chart.rows), dims, products, dict(chart.operations))"),),
           ("tests/test_charts_pages.py::test_every_drawing_names_its_page",)),
    Mutant("page: a resize does not fit the chart again", "charts/assets/chart.js",
           (literal("new ResizeObserver(refit).observe(plot);", "window.addEventListener('resize', layout);"),),
           ("tests/test_chart_page.py::test_the_chart_fits_the_window_on_load_and_after_a_resize",)),
    Mutant("page: the canvas takes the plot's whole height, the chart at its bottom", "charts/assets/chart.js",
           (literal("height = Math.max(0, Math.min(room, Math.ceil(", "height = Math.max(0, Math.max(room, Math.ceil("),),
           ("tests/test_chart_page.py::test_the_chart_fits_the_window_on_load_and_after_a_resize",)),
    Mutant("dependencies: the relaxed wavefront's edge below shifted a degree down", "nassau/engine/resolve.py",
           (literal("else [(s, t - 1), (s - 1, t - 1)]", "else [(s, t - 1), (s - 1, t - 2)]"),),
           ("tests/test_dependencies.py",)),
    Mutant("dependencies: the standard step's edge below missing", "nassau/engine/resolve.py",
           (literal("        return [(s, t - 1), (s - 1, t)]\n", "        return [(s, t - 1)]\n"),),
           ("tests/test_dependencies.py",)),
    Mutant("product tables: lookup takes a slot of the same S in another degree", "algebra/milnor/product_tables.py",
           (literal("if keys[at, 0] != s or (keys[at, 1] & _N_MASK) != np.uint64(n):", "if keys[at, 0] != s:"),),
           ("tests/test_product_tables.py::"
            "test_a_free_slot_taken_by_the_same_s_in_another_degree_is_not_read_as_the_key",)),
    Mutant("processes: the product tables stay private to each worker", "nassau/engine/processes.py",
           (literal("    tables_for(res.algebra).share_between_processes()\n", ""),),
           ("tests/test_processes.py::test_workers_fill_each_product_table_once_in_memory_they_share",)),
    Mutant("processes: a run's first light jobs go to the workers too", "nassau/engine/processes.py",
           (literal("    _run_here_while_light(graph, work, on_done)\n", ""),),
           ("tests/test_processes.py::test_a_runs_first_light_jobs_run_here_before_the_workers_start",)),
    Mutant("processes: a worker keeps its copies of the coordinator's pipe ends", "nassau/engine/processes.py",
           (literal("    for end in theirs:\n        end.close()\n", ""),),
           ("tests/test_processes.py::test_a_worker_leaves_when_the_coordinator_is_killed",)),
    Mutant("processes: every worker forked, none on a thread here", "nassau/engine/processes.py",
           (literal("for k in range(workers - 1):  # and one worker here, the last", "for k in range(workers):"),),
           ("tests/test_processes.py::test_ctrl_c_stops_the_workers_and_keeps_the_save",)),
    Mutant("processes: a worker is sent its own results back", "nassau/engine/processes.py",
           (literal(" if origin != k]", "]"),),
           ("tests/test_processes.py::test_a_worker_is_sent_the_other_workers_results_once_and_never_its_own",)),
    Mutant("shared pieces: a Nassau step offers its pieces to no other process", "nassau/engine/nassau_step.py",
           (literal("recipes = None if shipped_as is None or not helped() else", "recipes = None if True else"),),
           ("tests/test_processes.py::"
            "test_idle_workers_compute_pieces_of_a_running_step_and_give_the_same_generators",)),
    Mutant("shared pieces: a piece delivered before the job reaches it is lost", "nassau/engine/prefetch.py",
           (literal("            elif self._state[i] != _RUNNING:  # dropped",
                    "            if self._state[i] != _RUNNING:  # dropped"),),
           ("tests/test_prefetch.py::"
            "test_a_piece_claimed_by_another_process_is_waited_for_and_taken_not_recomputed",)),
    Mutant("shared pieces: every step's pieces are shared, asked for or not", "nassau/engine/shared_pieces.py",
           (literal("            self._latest, wanted = offer, self._wanted", "            self._latest, wanted = offer, True"),),
           ("tests/test_shared_pieces.py",)),
    Mutant("shared pieces: the owner takes a piece a helper has claimed", "nassau/engine/shared_pieces.py",
           (literal("            if self.states[k, h, i] in (ELSEWHERE, WRITTEN) and self.serials[k, h] == serial:",
                    "            if False:"),),
           ("tests/test_shared_pieces.py",)),
    Mutant("shared pieces: an offer reuses an inbox half a helper still writes to", "nassau/engine/shared_pieces.py",
           (literal("if not (self.states[k, h] == ELSEWHERE).any() or abandoned():", "if True:"),),
           ("tests/test_shared_pieces.py",)),
    Mutant("product tables: a key another thread or process is filling is claimed again",
           "algebra/milnor/product_tables.py",
           (literal("mine = np.nonzero(_unclaimed(self._keys, miss_s, miss_n))[0]", "mine = np.arange(len(miss_s))"),),
           ("tests/test_processes.py::test_workers_fill_each_product_table_once_in_memory_they_share",
            "tests/test_product_tables.py::test_threads_filling_at_once_agree")),
    Mutant("cluster: a task sent with its first dependency only", "nassau/store/cluster.py",
           (literal("for b in bidegrees for d in deps(*b)", "for b in bidegrees for d in deps(*b)[:1]"),),
           ("tests/test_cluster.py::test_each_task_is_sent_with_the_tasks_of_its_dependencies",)),
    Mutant("nassau: the sub-algebra chosen for t, not t - top cell", "nassau/engine/nassau_step.py",
           (literal("return optimal_subalgebra(s, t - module.max_degree)", "return optimal_subalgebra(s, t)"),),
           ("tests/test_resolve_charts.py::test_nassau_equals_standard",)),
    Mutant("odd nassau: the sub-algebra chosen for t, not t - top cell", "nassau/engine/nassau_step.py",
           (literal("optimal_odd_subalgebra(p, module.profile, s, t - module.max_degree)",
                    "optimal_odd_subalgebra(p, module.profile, s, t)"),),
           ("tests/test_nassau_odd.py::test_nassau_equals_standard",)),
    Mutant("nassau step: a step without zero-signature rows built anyway", "nassau/engine/nassau_step.py",
           (literal("    if shortcuts and not len(z_t):\n", "    if False:\n"),),
           ("tests/test_nassau_odd.py::test_step_shortcuts_are_their_twin",)),
    Mutant("odd nassau: the standard step where B is not F_p", "nassau/engine/nassau_step.py",
           (literal("and not subalgebra_for(module, s, t).top_degree", "and True"),),
           ("tests/test_nassau_odd.py::test_the_nassau_path_runs_and_its_resolution_is_minimal",)),
    Mutant("nassau preimages: the sub-algebra of the step at s, not s + 1", "nassau/engine/preimages.py",
           (literal("sub = subalgebra_for(res.module, s + 1, t)", "sub = subalgebra_for(res.module, s, t)"),),
           ("tests/test_chain_map.py::test_nassau_preimages_use_the_subalgebra_of_the_step_one_filtration_up",)),
    Mutant("secondary products: sigma(d) sigma(c) with coefficient 1, not 3", "nassau/secondary/homomorphism.py",
           (literal("return [(3, self.source.differential(s), c.free_map(s - 1)),",
                    "return [(1, self.source.differential(s), c.free_map(s - 1)),"),),
           ("tests/test_secondary_products.py::test_the_secondary_lift_of_the_unit_is_zero",)),
    Mutant("product tables: the rehash loses a key", "algebra/milnor/product_tables.py",
           (literal("_insert(grown, keys[keys[:, 0] != _EMPTY])", "_insert(grown, keys[keys[:, 0] != _EMPTY][1:])"),),
           ("tests/test_product_tables.py::test_the_key_hash_grows_and_keeps_every_key_and_its_table",)),
    Mutant("odd Ext products: the sphere's one-map route without the commutation sign", "nassau/products/ext_algebra.py",
           (literal("    return p - 1 if (x[0] * y[0] + x[1] * y[1]) % 2 else 1\n", "    return 1\n"),),
           ("tests/test_products_odd.py::test_graded_commutativity_and_associativity",)),
    Mutant("odd Massey: the null-homotopy corrects by + h(d x), not - h(d x)", "nassau/lifting/chain_homotopy.py",
           (literal("f.subtract(full[:, :f.storage(width)], base)", "f.subtract(base, full[:, :f.storage(width)])"),),
           ("tests/test_products_odd.py::test_null_homotopy_identity_over_f3",)),
    Mutant("odd products: the Q-move sign counts the Q's above k, not above m", "algebra/milnor/odd_kernels.py",
           (literal("rest = t_e[a] >> (m + 1)", "rest = t_e[a] >> (k + 1)"),),
           ("tests/test_odd_primes.py::test_q_move_signs_fixed_vectors",)),
    Mutant("odd products: the Q-move sign is 2, not p - 1", "algebra/milnor/odd_kernels.py",
           (literal("n_c[made] = t_c[a] * (p - 1) % p if above & 1", "n_c[made] = t_c[a] * 2 % p if above & 1"),),
           ("tests/test_odd_primes.py::test_q_move_signs_fixed_vectors",)),
    Mutant("Z/4 memo: a free slot's value read as the pair's", "algebra/secondary/z4_memo.py",
           (literal("value = keys[at, 2] if keys[at, 0] == r + _ONE and keys[at, 1] == s + _ONE else np.uint64(0)",
                    "value = keys[at, 2]"),),
           ("tests/test_z4_memo.py::test_a_free_slot_holding_another_pairs_value_is_not_read",)),
    Mutant("warmup: no lock, every run on an empty cache starts a helper", "algebra/milnor/warmup.py",
           (literal("        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)\n", "        pass\n"),),
           ("tests/test_warmup.py::test_runs_started_together_on_an_empty_cache_start_one_helper",)),
    Mutant("warmup: product tables made while the helper compiles their kernels", "algebra/milnor/product_tables.py",
           (literal("return helper_compiling() or (self._full", "return (self._full"),),
           ("tests/test_warmup.py",)),
    Mutant("Z/4 products: cut at three carries, not two", "algebra/secondary/pair_algebra.py",
           (literal("            if carries + more < 2:\n                break",
                    "            if carries + more < 3:\n                break"),),
           ("tests/test_secondary.py::test_pruned_z4_products_are_every_matrix",)),
    Mutant("Z/4 products: taking a cell back leaves its column's x_0j on its anti-diagonal",
           "algebra/secondary/pair_algebra.py",
           (literal("            if cell & 2:\n                dsum[j] -= rem_col[j]\n", ""),),
           ("tests/test_secondary.py::test_pruned_z4_products_are_every_matrix",)),
    Mutant("batch kernel: rows ranked reading their fields from the bottom", "algebra/milnor/kernels.py",
           (literal("    for h in range(MAX_LEN - 1, 0, -1):\n        rh = np.int64((word",
                    "    for h in range(1, MAX_LEN):\n        rh = np.int64((word"),),
           ("tests/test_algebra_products.py::test_batch_equals_one_at_a_time",)),
    Mutant("dense preimages: every block read from the first block's rows", "nassau/engine/nassau_step.py",
           (literal("part, at = image[at:at + len(rows)], at + len(rows)", "part, at = image[at:at + len(rows)], at"),),
           ("tests/test_chain_map.py::test_dense_preimages_are_the_blockwise_ones_from_one_build",)),
    Mutant("Z/4 products: the pruned path's coefficient without its sign", "algebra/secondary/pair_algebra.py",
           (literal("2 if carries else 1 + 2 * sign", "2 if carries else 1"),),
           ("tests/test_secondary.py::test_pruned_z4_products_are_every_matrix",)),
    Mutant("Z/4 products: the listed indices are one past the terms", "algebra/secondary/pair_algebra.py",
           (literal("            hits[hits[0]] = idx\n", "            hits[hits[0]] = idx + 1\n"),),
           ("tests/test_z4_memo.py",)),
    Mutant("marshal: one thread too many per row", "gpu/marshal.py",
           (literal("((row_counts.astype(np.int64) + group - 1) // group)",
                    "(row_counts.astype(np.int64) // group + 1)"),),
           ("tests/test_gpu_products.py",)),
    Mutant("block starts kept forever", "algebra/free/free_module.py",
           (literal("                if len(cache) > CACHED_STARTS:\n"
                    "                    del cache[next(iter(cache))]\n",
                    ""),),
           ("tests/test_algebra_basis.py::test_a_free_module_keeps_only_its_latest_block_starts",)),
    Mutant("block starts drop the newest", "algebra/free/free_module.py",
           (literal("del cache[next(iter(cache))]", "cache.popitem()"),),
           ("tests/test_algebra_basis.py::test_a_free_module_keeps_only_its_latest_block_starts",)),
    Mutant("a block's identity placed as if it were the first", "fp/modp_nibbles.py",
           (literal("        c = ncols + first + i\n", "        c = ncols + i\n"),),
           ("tests/test_fp_modp.py::test_packing_row_blocks_equals_packing_the_whole_matrix",)),
    Mutant("the standard step builds d whole", "nassau/engine/standard.py",
           (literal("    return RowBlocks(n, res.field.storage(ncols) * res.field.dtype.itemsize,\n"
                    "                     lambda r0, r1: d.matrix(t, np.arange(r0, r1, dtype=np.int64), target_ngens))",
                    "    return d.matrix(t, np.arange(n, dtype=np.int64), target_ngens)"),),
           ("tests/test_fp_modp.py::test_a_large_step_at_p3_never_builds_its_differential_whole",)),
    Mutant("compile time: numba's listener registered on import again", "nassau/engine/compile_time.py",
           (literal("_installed = False\n", "event.register(\"numba:compiler_lock\", _Clock())\n_installed = True\n"),),
           ("tests/test_architecture.py",)),
    Mutant("processes: results not handed on to the other workers", "nassau/engine/processes.py",
           (literal("                    log.append(k, added)\n", ""),),
           ("tests/test_processes.py",)),
    Mutant("store: temporary file tracked only after it is opened", "nassau/store/save_dir.py",
           (literal("            self._in_flight.add(tmp)\n            fh = open(tmp, \"wb\")\n",
                    "            fh = open(tmp, \"wb\")\n            self._in_flight.add(tmp)\n"),),
           ("tests/test_store.py",)),
    Mutant("cached kernels load after numba's refresh again", "nassau/__init__.py",
           (literal("        kernel_loading.install()\n", "        pass\n"),),
           ("tests/test_kernel_loading.py",)),
    Mutant("svg titles escaped by xml.sax.saxutils", "charts/svg.py",
           (literal("from html import escape\n", "from xml.sax.saxutils import escape\n"),
            literal("escape(title, quote=False)", "escape(title)")),
           ("tests/test_charts_svg.py::test_the_cli_imports_no_network_modules",)),
    Mutant("progress: the bar stays up after its with block (the chart printed onto it)", "nassau/api/progress.py",
           (literal("        super().__exit__(exc_type, exc, tb)\n        self._stop()\n",
                    "        super().__exit__(exc_type, exc, tb)\n"),),
           ("tests/test_terminal.py",)),
    Mutant("cost: the guard never shrinks the product tables", "nassau/cost/memory.py",
           (literal("if used >= SHRINK_AT * self.budget and not self.shrunk:",
                    "if used >= KILL_AT * self.budget and not self.shrunk:"),),
           ("tests/test_cost.py::test_the_guard_shrinks_then_stops_then_kills",)),
    Mutant("cost: a run held to a budget leaves the product tables their own", "nassau/cost/budget.py",
           (literal("                held.limit(self.tables)\n", "                pass\n"),),
           ("tests/test_cost.py::test_a_held_run_limits_the_product_tables_to_their_share",)),
    Mutant("cost: dim A_n without the odd primes' tau_k", "nassau/cost/sizes.py",
           (literal("    if prime != 2:\n        k = 0", "    if False:\n        k = 0"),),
           ("tests/test_cost.py::test_algebra_dims_match_the_bases",)),
    Mutant("cost: a stopped run says nothing of where", "nassau/cost/budget.py",
           (literal('where = f" at (s, t) = {at}" if at is not None else ""', 'where = ""'),),
           ("tests/test_cost.py::test_a_run_stopped_by_its_budget_keeps_what_it_finished_and_resumes",)),
    Mutant("gpu timing: the kernels and copies timed (and waited for) outside debug runs only", "gpu/device.py",
           (literal("        if not config.current().debug:\n            yield\n",
                    "        if config.current().debug:\n            yield\n"),),
           ("tests/test_gpu_products.py::test_kernel_and_copy_times_are_counted_under_debug_only",)),
    Mutant("device check: a step started with no time left", "benchmarks/device_check.py",
           (literal("        if left < c.sizes.min_run:\n", "        if left < -1e9:\n"),),
           ("tests/test_device_check.py::test_the_time_limit_stops_it_cleanly_keeping_what_it_measured",)),
    Mutant("motivic: a cell complex's weights from Sq^(2^k) stop one short", "algebra/module/motivic.py",
           (literal("    for k in range(span.bit_length()):\n", "    for k in range(span.bit_length() - 1):\n"),),
           ("tests/test_motivic_weights.py",)),
    Mutant("motivic: --max-weight W leaves out the generators of weight W", "nassau/api/motivic.py",
           (literal("c.weight <= self.max_weight))", "c.weight < self.max_weight))"),),
           ("tests/test_motivic_weights.py",)),
    Mutant("motivic: h3's weight read as that of Sq^6", "nassau/products/motivic_ext.py",
           (literal("    return weight((1 << i,))\n", "    return weight((2 * i,))\n"),),
           ("tests/test_motivic_weights.py",)),
    Mutant("motivic store: the kept kernel's solvers saved as zeros", "nassau/store/motivic_save.py",
           (literal("solver.ravel().view(np.int64)", "np.zeros_like(solver).ravel().view(np.int64)"),),
           ("tests/test_motivic_resume.py",)),
    Mutant("store: a non-empty folder without a manifest taken over", "nassau/store/save_dir.py",
           (literal("        elif self.path.exists() and any(self.path.iterdir()):\n"
                    "            raise StoreError(f\"save directory {self.path} is not empty and has no {MANIFEST}; "
                    "refusing to use it\")\n", ""),),
           ("tests/test_save_refusals.py",)),
    Mutant("processes: workers take Ctrl-C themselves", "nassau/engine/processes.py",
           (literal("    signal.signal(signal.SIGINT, signal.SIG_IGN)\n", ""),),
           ("tests/test_processes.py::test_ctrl_c_stops_the_workers_and_keeps_the_save",)),
    Mutant("Ctrl-C test on worker processes, pytest started with SIGINT ignored (must pass)", "", (),
           ("tests/test_processes.py::test_ctrl_c_stops_the_workers_and_keeps_the_save",), sigint_ignored=True),
    Mutant("odd products: a multiple c a_0 or c h_0 read as a_0 or h_0", "nassau/products/ext_algebra.py",
           (literal("self.scaled(h_matrix(self.module, op, n, s), b.vector[0])", "h_matrix(self.module, op, n, s)"),),
           ("tests/test_products_multiples.py",)),
    Mutant("budget: a run inside a caller's process ended at the last threshold", "nassau/cost/budget.py",
           (literal("        if not self.hard_stop:\n            self.guard.stopping.set()\n            return\n", ""),),
           ("tests/test_cost.py::test_only_a_run_that_owns_its_process_ends_it_past_the_last_threshold",)),
    Mutant("budget: a held run never looks at the jobs ahead", "nassau/cost/budget.py",
           (literal("while need and nxt not in self.finished and held + need > STOP_AT * self.budget:",
                    "while False:"),),
           ("tests/test_cost.py::test_a_held_run_stops_before_a_job_too_large_for_what_is_left",)),
    Mutant("budget: the tables capped at their default again", "nassau/cost/budget.py",
           (literal("budget_bytes(default_mb=max(share, 0.0) / 2**20)", "budget_bytes()"),),
           ("tests/test_cost.py::test_a_large_budget_gives_the_tables_more_than_their_default",)),
    Mutant("estimate: forked workers hold nothing of their own", "nassau/cost/estimate.py",
           (literal("copies = (threads - 1) * (floor + basis + rows) if processes else 0.0", "copies = 0.0"),),
           ("tests/test_cost.py::test_worker_processes_count_their_own_copies",)),
    Mutant("choices: threads always", "nassau/cost/choices.py",
           (literal("return (fits(by_processes, estimates.budget) and not by_processes.tables_capped", "return (False"),),
           ("tests/test_choices.py::test_processes_by_default_where_the_estimate_says_they_are_faster",)),
    Mutant("choices: auto always Nassau's", "nassau/cost/choices.py",
           (literal('return "standard" if walls["standard"] < walls["nassau"] else "nassau"', 'return "nassau"'),),
           ("tests/test_choices.py::test_auto_takes_the_algorithm_the_estimate_says_is_faster",)),
    Mutant("estimate: a sub-algebra's basis alone", "nassau/cost/estimate.py",
           (literal("if prime == 2 and not over.profile.is_full:", "if False:"),),
           ("tests/test_cost.py::test_a_change_of_rings_counts_the_whole_algebras_basis_it_builds",)),
    Mutant("budget: enumeration costs as at odd primes everywhere", "nassau/cost/budget.py",
           (literal("ENUMERATED = {2: 2.75}", "ENUMERATED = {2: 1.75}"),),
           ("tests/test_cost.py::test_capped_tables_cost_time_as_measured_at_their_prime",)),
    Mutant("tau quotient: every matrix reduced whole", "nassau/engine/tau_quotient.py",
           (literal("WHOLE_BITS = 1 << 16", "WHOLE_BITS = 1 << 60"),),
           ("tests/test_motivic_ctau.py::test_the_weight_blocks_reduce_as_the_whole_masked_matrix",)),
    Mutant("tau quotient: the blocks' kernels left in block order", "nassau/engine/tau_quotient.py",
           (literal('order = np.argsort(pivots_all, kind="stable")', "order = np.arange(len(pivots_all))"),),
           ("tests/test_motivic_ctau.py::test_the_weight_blocks_reduce_as_the_whole_masked_matrix",)),
    Mutant("tau quotient: a worker's record without its weights", "nassau/engine/motivic.py",
           (literal("        if isinstance(added, WeightedAdded):", "        if False:"),),
           ("tests/test_motivic_ctau.py::test_worker_processes_give_the_one_thread_output",)),
    Mutant("choices: each estimate made anew", "nassau/cost/choices.py",
           (literal("        if key not in self._made:", "        if True:"),),
           ("tests/test_choices.py::test_a_request_makes_each_estimate_once",)),
    Mutant("motivic: the cores for every run", "nassau/api/motivic.py",
           (literal("return 1 if len(whole.bidegrees()) < SMALL_RUN_BIDEGREES else cores()", "return cores()"),),
           ("tests/test_motivic_ctau.py::test_one_thread_by_default_for_a_small_motivic_run",)),
    Mutant("choices: the cores for every run", "nassau/cost/choices.py",
           (literal("return 1 if est.speedup == 1.0 else cores", "return cores"),),
           ("tests/test_choices.py::test_one_thread_by_default_for_a_run_too_small_to_share_the_cores",)),
    Mutant("request: the default threads for named ones too", "nassau/api/request.py",
           (literal("if not named_threads and processes", "if processes"),),
           ("tests/test_choices.py::test_one_thread_by_default_for_a_run_too_small_to_share_the_cores",)),
    Mutant("motivic processes: a step on any worker", "nassau/engine/motivic.py",
           (literal("bound=lambda s, t: (s - 1, t) if s else None", "bound=None"),),
           ("tests/test_motivic_ctau.py::test_the_sphere_over_ac_on_worker_processes_gives_the_one_thread_output",)),
    Mutant("processes: a bound job given to whichever worker asks", "nassau/engine/processes.py",
           (literal("            if owner is None or owner == k:", "            if True:"),),
           ("tests/test_processes.py::test_bound_jobs_stay_on_their_worker_and_chains_spread",)),
    Mutant("motivic: a run never refused up front", "nassau/api/motivic.py",
           (literal("        if fits(est, self.budget) or self.force:", "        if True:"),),
           ("tests/test_motivic_budget.py::test_too_large_a_run_is_refused_up_front",)),
    Mutant("motivic: a run not held to its budget", "nassau/api/motivic.py",
           (literal("            with held if held is not None else nullcontext():", "            with nullcontext():"),),
           ("tests/test_motivic_budget.py::test_a_forced_run_stops_within_its_budget_and_resumes",)),
    Mutant("generators: the probe's rows held at every stem", "nassau/cost/generators.py",
           (literal("        if self.drift is None:\n            return out", "        return out"),),
           ("tests/test_cost.py::test_the_spheres_rows_drift_toward_the_lower_rows",)),
    Mutant("generators: no known curve at p = 3", "nassau/cost/generators.py",
           (literal("3: Sphere(SPHERE_3, DRIFT_3)", "5: Sphere(SPHERE_3, DRIFT_3)"),),
           ("tests/test_cost.py::test_the_spheres_rows_drift_toward_the_lower_rows",)),
]


def apply(mutant: Mutant, repo: Path) -> str | None:
    """Apply the mutant's edits in the copy; return why not, or None."""
    if not mutant.edits:
        return None
    path = repo / mutant.path
    text = path.read_text(encoding="utf-8")
    for pattern, replacement in mutant.edits:
        text, count = re.subn(pattern, replacement, text)
        if count != 1:
            return f"pattern matched {count} times: {pattern[:60]!r}"
    path.write_text(text, encoding="utf-8")
    return None


def run_tests(repo: Path, tests: tuple[str, ...], env: dict, *, sigint_ignored: bool = False, first_only: bool = True,
              deselect: tuple[str, ...] = ()) -> tuple[int, list[str], str]:
    """pytest's exit status, the failed test ids and its last line."""
    ignore = (lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)) if sigint_ignored else None
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *(["-x"] if first_only else []),
           *(f"--deselect={d}" for d in deselect), *tests]
    try:
        out = subprocess.run(cmd, cwd=repo, env=env, capture_output=True, text=True, timeout=TIMEOUT,
                             preexec_fn=ignore)
    except subprocess.TimeoutExpired:
        return -1, [], f"timed out after {TIMEOUT} s"
    lines = (out.stdout + out.stderr).strip().splitlines()
    failed = [line.split(" ", 1)[1].split(" - ")[0] for line in lines if line.startswith(("FAILED ", "ERROR "))]
    return out.returncode, failed, lines[-1] if lines else ""


def fresh_copy(source: Path, repo: Path) -> None:
    if repo.exists():
        shutil.rmtree(repo)
    shutil.copytree(source, repo, ignore=COPY_IGNORE)


def tests_at(revision: str, repo: Path) -> None:
    """Replace the copy's tests/ by those at a git revision, to see what an older suite let through."""
    shutil.rmtree(repo / "tests")
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", revision, "tests"], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(repo)], input=archive.stdout, check=True)


def main(args: list[str]) -> int:
    revision = args[args.index("--tests-at") + 1] if "--tests-at" in args else None
    words = [a for a in args if a not in ("--tests-at", revision)]
    chosen = [m for m in MUTANTS if not words or any(w.lower() in m.name.lower() for w in words)]
    scratch = Path(tempfile.mkdtemp(prefix="nassau-mutants-"))
    repo = scratch / "repo"
    env = {k: v for k, v in os.environ.items() if k not in ("NASSAU_NUMBA_BASE", "NUMBA_CACHE_DIR", "PYTHONPATH")}
    env.update(NUMBA_CACHE_DIR=str(scratch / "numba"), PYTHONPATH=str(repo))
    try:
        snapshot = scratch / "snapshot"  # one copy of the tree as it is now: later edits to it change no run
        fresh_copy(ROOT, snapshot)
        if revision:
            tests_at(revision, snapshot)
        fresh_copy(snapshot, repo)
        files = sorted({t.split("::")[0] for m in chosen for t in m.tests if t.startswith("tests/")})
        start = time.monotonic()
        rc, broken, last = run_tests(repo, tuple(f for f in files if (repo / f).exists()), env, first_only=False)
        print(f"baseline (unmutated copy) {' '.join(files)}: {last} ({time.monotonic() - start:.0f} s)", flush=True)
        if rc not in (0, 1):
            return 1
        for test in broken:
            print(f"  fails unmutated, deselected below: {test}", flush=True)
        rows = []
        for mutant in chosen:
            fresh_copy(snapshot, repo)
            start = time.monotonic()
            problem = apply(mutant, repo)
            if problem:
                result = f"not applied: {problem}"
            else:
                rc, failed, last = run_tests(repo, mutant.tests, env, sigint_ignored=mutant.sigint_ignored,
                                             deselect=tuple(broken))
                if not mutant.edits:
                    result = "passed" if rc == 0 else f"FAILED ({failed[0] if failed else last})"
                elif rc == 1 and failed:
                    result = f"killed by {failed[0].split('/')[-1]}"
                else:
                    result = {0: "SURVIVED", 4: "SURVIVED (no such test)", 5: "SURVIVED (deselected)"}.get(
                        rc, f"error rc={rc} ({last})")
            rows.append((mutant.name, " ".join(mutant.tests), result, time.monotonic() - start))
            print(f"{mutant.name}: {result} ({rows[-1][3]:.0f} s)", file=sys.stderr, flush=True)
        print("\n| mutant | tests run | result |\n| --- | --- | --- |")
        for name, tests, result, seconds in rows:
            print(f"| {name} | {tests} | {result} ({seconds:.0f} s) |")
        bad = [r for r in rows if not r[2].startswith(("killed", "passed"))]
        return 1 if bad or broken else 0
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
