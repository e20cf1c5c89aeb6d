"""Bruner's text format for minimal resolutions of F2 (REFERENCE-UNSTABLE 4): read his files, write ours.

One file `hDiff.s` per filtration: a header (number of generators, largest internal degree computed), then per
generator, in degree order, its degree t, the number L of terms, and L lines `j d D i(R1)(R2)...(Rk).`: the
differential has the term (Sq(R1) + ... + Sq(Rk)) g_j, with g_j generator j of F_{s-1} (numbered from 0 in file
order), d = t - |g_j| and D = dim A_d. Exponent lists are Milnor's, so nothing is converted: a term is a column of
our free modules. hDiff.0 is the augmentation of F2, one generator `0 0 1 i(0).`. Empty lines do not matter.

Reading checks everything the format states (counts, degrees, d and D, each R's degree, d d = 0) so that a
truncated or inconsistent file is refused with its name and line instead of resolving garbage. Writing follows the
reference's save_bruner (which at its snapshot cannot run): header `        N        T` and an empty line, and
per generator `t`, an empty line, `L`, the terms and an empty line (three after the augmentation).
"""
from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from algebra.milnor.ppart import trimmed
from algebra.module.interface import Module
from charts.atomic import write_text_atomic
from nassau.engine.region import Region
from nassau.engine.resolution import Resolution
from nassau.lifting.chain_map import ChainMap, lift
from nassau.tools.resolution_text import stem_order

_TERM = re.compile(r"^(\d+) +(\d+) +(\d+) +i((?:\(\d*(?:,\d+)*\))*)\.$")
_EXPONENTS = re.compile(r"\((\d*(?:,\d+)*)\)")


class BrunerError(ValueError):
    """A Bruner file is missing, truncated or inconsistent, or a resolution cannot be written in his format."""


def file_name(s: int) -> str:
    return f"hDiff.{s}"


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    try:
        text = path.read_text(encoding="ascii")
    except (OSError, UnicodeDecodeError) as exc:
        raise BrunerError(f"{path}: cannot read: {getattr(exc, 'strerror', None) or exc}") from None
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            yield number, line.strip()


def _ints(path: Path, lines: Iterator[tuple[int, str]], count: int, what: str) -> tuple[int, list[int]]:
    try:
        number, line = next(lines)
    except StopIteration:
        raise BrunerError(f"{path}: ends where {what} should follow (truncated?)") from None
    fields = line.split()
    if len(fields) != count or not all(f.isdigit() for f in fields):
        raise BrunerError(f"{path} line {number}: expected {what}, found {line!r}")
    return number, [int(f) for f in fields]


def read_bruner(directory: str | Path, module: Module) -> tuple[Resolution, dict[int, int]]:
    """The resolution of F2 (module: the sphere, p = 2) held by hDiff.0, hDiff.1, ... in directory, and the largest
    internal degree each filtration reaches; every bidegree up to it is marked done."""
    directory = Path(directory)
    if not (directory / file_name(0)).is_file():
        raise BrunerError(f"{directory}: no {file_name(0)} (not a directory of Bruner's hDiff.s files)")
    res = Resolution(module)
    reach: dict[int, int] = {}
    s = 0
    while (directory / file_name(s)).is_file():
        reach[s] = _read_filtration(res, directory / file_name(s), s)
        s += 1
    _check_complex(res, directory, reach)
    return res, reach


def _read_filtration(res: Resolution, path: Path, s: int) -> int:
    lines = _lines(path)
    _, (count, top) = _ints(path, lines, 2, "the header (number of generators, largest degree)")
    basis = res.algebra
    basis.extend(top)
    blocks: dict[int, list[np.ndarray]] = {}
    below = res.free(s - 1) if s else None
    last = -1
    for _ in range(count):
        number, (t,) = _ints(path, lines, 1, "a generator's degree")
        if t < max(last, s) or t > top:
            raise BrunerError(f"{path} line {number}: degree {t} is out of order, below {s} or above the header's "
                              f"{top}")
        last = t
        _, (length,) = _ints(path, lines, 1, "the number of terms")
        terms = [_term(path, lines, t) for _ in range(length)]
        blocks.setdefault(t, []).append(_vector(res, path, s, t, terms, below))
    extra = next(lines, None)
    if extra is not None:
        raise BrunerError(f"{path} line {extra[0]}: more generators than the header's {count}")
    for t in range(s, top + 1):
        if s and not res.is_done(s - 1, t - 1):  # d of a generator of degree t names those of degree < t only
            raise BrunerError(f"{path}: filtration {s} reaches t = {top}, more than one beyond {file_name(s - 1)}")
        rows = blocks.get(t, [])
        if s == 0:
            res.add_generators(0, t, np.ones((len(rows), 1), dtype=np.uint8))
        else:
            ngens = below.gens_below(t)
            width = res.field.storage(below.dimension(t, ngens))
            res.add_generators(s, t, np.array(rows, dtype=np.uint64).reshape(len(rows), width), ngens)
    return top


def _term(path: Path, lines: Iterator[tuple[int, str]], t: int) -> tuple[int, int, int, list[tuple[int, ...]], int]:
    try:
        number, line = next(lines)
    except StopIteration:
        raise BrunerError(f"{path}: ends inside the terms of a generator of degree {t} (truncated?)") from None
    m = _TERM.match(line)
    if m is None:
        raise BrunerError(f"{path} line {number}: expected a term `j d D i(R1)(R2)...`, found {line!r}")
    j, d, dim = (int(m.group(k)) for k in range(1, 4))
    ops = [tuple(int(x) for x in e.split(",")) if e else () for e in _EXPONENTS.findall(m.group(4))]
    return j, d, dim, ops, number


def _vector(res: Resolution, path: Path, s: int, t: int, terms: list, below) -> np.ndarray:
    """A generator's differential as a packed vector over F_{s-1}(t) (its generators of degree < t); at s = 0 the
    augmentation, which must be the unit of F2."""
    basis = res.algebra
    if s == 0:
        if t != 0 or [(j, d, dim, ops) for j, d, dim, ops, _ in terms] != [(0, 0, 1, [(0,)])]:
            raise BrunerError(f"{path}: F_0 must be one generator of degree 0 with the term `0 0 1 i(0).` (Bruner's "
                              "format holds resolutions of F2)")
        return np.ones(1, dtype=np.uint64)
    ngens = below.gens_below(t)
    off = below.offsets(t, ngens)
    bits = np.zeros(int(off[-1]), dtype=bool)
    for j, d, dim, ops, number in terms:
        where = f"{path} line {number}"
        if j >= ngens:
            raise BrunerError(f"{where}: generator {j} of {file_name(s - 1)} does not exist below degree {t}")
        want = t - int(below.gen_degrees[j])
        if d != want or dim != basis.dimension(d):
            raise BrunerError(f"{where}: d = {d}, D = {dim} do not fit generator {j} of degree "
                              f"{int(below.gen_degrees[j])}: expected d = {want}, D = dim A_{want} = "
                              f"{basis.dimension(want)}")
        for r in ops:
            r = trimmed(r)
            if basis.degree(r) != d:
                raise BrunerError(f"{where}: Sq{r} has degree {basis.degree(r)}, not {d}")
            bits[off[j] + basis.index(r)] ^= True
    packed = np.zeros(res.field.storage(len(bits)), dtype=np.uint64)
    for i in np.nonzero(bits)[0]:
        packed[i >> 6] |= np.uint64(1) << np.uint64(i & 63)
    return packed


def _check_complex(res: Resolution, directory: Path, reach: dict[int, int]) -> None:
    """d d = 0 on every generator (one product per degree): files whose terms are each fine but that are not a
    complex are refused."""
    for s in range(2, len(reach)):
        fs, d_low = res.free(s), res.differential(s - 1)
        for t in range(s, reach[s] + 1):
            first, last = fs.gens_below(t), fs.gens_below(t + 1)
            if first == last:
                continue
            rows = res.differential(s).outputs(first, last)
            bad = np.nonzero(d_low.apply(t, rows, res.free(s - 2).gens_below(t)).any(axis=1))[0]
            if len(bad):
                raise BrunerError(f"{directory}: d d is not zero on generator {first + int(bad[0])} of {file_name(s)} "
                                  f"(degree {t}): {file_name(s - 1)} and {file_name(s)} do not make a chain complex")


def bruner_text(res: Resolution, s: int, top: int) -> str:
    """hDiff.s for filtration s of a resolution of F2 computed through degree top (the reference's save_bruner)."""
    fs = res.free(s)
    out = [f"        {fs.gens_below(top + 1)}        {top}\n\n"]
    for g in range(fs.gens_below(top + 1)):
        t = int(fs.gen_degrees[g])
        out.append(f"{t}\n\n")
        if s == 0:
            out.append("1\n0 0 1 i(0).\n\n\n\n")
            continue
        vec, ngens = res.differential(s).output(g)
        below = res.free(s - 1)
        off = below.offsets(t, ngens)
        bits = np.unpackbits(vec.view(np.uint8), bitorder="little")[:int(off[-1])]
        lines = []
        for j in range(ngens):
            hit = np.nonzero(bits[off[j]:off[j + 1]])[0]
            if len(hit):
                d = t - int(below.gen_degrees[j])
                ops = "".join("(" + ",".join(str(x) for x in res.algebra.element(d, int(i))) + ")" for i in hit)
                lines.append(f"{j} {d} {res.algebra.dimension(d)} i{ops}.\n")
        out.append(f"{len(lines)}\n" + "".join(lines) + "\n")
    return "".join(out)


def check_writable(module: Module) -> None:
    """Bruner's format holds minimal resolutions of F2 at p = 2 over the whole algebra."""
    if (module.algebra.prime != 2 or not module.profile.is_full or module.min_degree != 0
            or module.dimension(0) != 1 or module.max_degree != 0):
        raise BrunerError(f"Bruner's format holds resolutions of F2 over the Steenrod algebra at p = 2, not of "
                          f"{module.name}")


def write_bruner(res: Resolution, region: Region, directory: str | Path) -> list[Path]:
    """hDiff.0 .. hDiff.{max_s} of the resolution (each filtration through the region's last degree) in directory."""
    check_writable(res.module)
    directory = Path(directory)
    written = []
    for s in range(region.max_s + 1):
        path = directory / file_name(s)
        write_text_atomic(path, bruner_text(res, s, region.row_end(s)))
        written.append(path)
    return written


def check_reach(reach: dict[int, int], region: Region) -> None:
    """The files must hold every bidegree of the region."""
    for s in range(region.max_s + 1):
        if s not in reach or reach[s] < region.row_end(s):
            have = f"reach t = {reach[s]}" if s in reach else "end below it"
            raise BrunerError(f"Bruner's files {have} in filtration {s}; the region needs t = {region.row_end(s)} "
                              "(ask for a smaller stem)")


def compare_text(bruner: Resolution, ours: Resolution, region: Region, threads: int = 1) -> str:
    """The reference's `bruner` lines: the identity of F2 lifted to a chain map from Bruner's resolution to ours,
    and for each of our generators x_(n,s,j) its row of the induced map: the coefficients of Bruner's generators."""
    f = ChainMap.from_class(bruner, ours, 0, 0, np.ones(1, dtype=np.uint8), region, name="the comparison map")
    lift([f], threads)
    lines = ["sseq_basis | bruner_basis\n"]
    for n, s in stem_order(ours, region):
        for j, row in enumerate(f.hom_k(s, n + s)):
            lines.append(f"x_({n},{s},{j}) = [{', '.join(str(int(v)) for v in row)}]\n")
    return "".join(lines)
