"""The command line on a terminal: `nassau` run in a pseudo-terminal that is both its stdout and its stderr, as in
a shell, and what ends up on the screen read off a small emulator of the codes the progress bar writes (rich:
carriage return, erase line, cursor up, colours). Each run is a process of its own (a pty is a process's terminal).
"""
from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import struct
import sys
import termios

from charts.text import with_axes
from nassau.tools.mahowald import mahowald_lines
from tests.helpers import golden, run_cli

CODE = re.compile(r"\x1b\[(\??)([0-9;]*)([A-Za-z])")


def on_terminal(*args: str, columns: int = 120) -> bytes:
    """Everything `python -m nassau ARGS` writes to its terminal (stdout and stderr are the same pty)."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: its stdin, stdout and stderr are the pty
        os.execv(sys.executable, [sys.executable, "-m", "nassau", *args])
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    out = b""
    while True:
        ready, _, _ = select.select([fd], [], [], 300)
        if not ready:
            os.kill(pid, 9)
            break
        try:
            data = os.read(fd, 65536)
        except OSError:  # EIO: the child has exited and the pty is closed
            break
        if not data:
            break
        out += data
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, out.decode(errors="replace")
    return out


def screen(raw: bytes) -> list[str]:
    """The lines left on the screen after `raw` is written to it, trailing spaces and empty last lines dropped."""
    lines: list[list[str]] = [[]]
    row = col = 0
    text = raw.decode("utf-8")
    i = 0
    while i < len(text):
        code = CODE.match(text, i)
        if code:
            private, number, command = code.groups()
            if not private and command == "K":
                lines[row] = []
            elif not private and command == "A":
                row = max(0, row - int(number or 1))
            i = code.end()
            continue
        char = text[i]
        i += 1
        if char == "\r":
            col = 0
        elif char == "\n":
            row += 1
            while len(lines) <= row:
                lines.append([])
        else:
            line = lines[row]
            line.extend(" " * (col + 1 - len(line)))
            line[col] = char
            col += 1
    shown = ["".join(line).rstrip() for line in lines]
    while shown and not shown[-1]:
        shown.pop()
    return shown


def test_the_bar_is_gone_before_the_chart_is_printed() -> None:
    """The live bar is drawn (its frames are in the output) and taken down before the chart's first byte: the
    screen holds the chart (with its axes, as on any terminal) and the summary line, and nothing of the bar."""
    raw = on_terminal("resolve", "S_2", "--stem", "30", "--max-s", "11", "--threads", "1")
    assert b"bidegrees" in raw
    chart = [line.rstrip() for line in with_axes(golden("resolve_through_stem-S_2"), 0).splitlines()]
    shown = screen(raw)
    assert shown[:-1] == chart and shown[-1].startswith("S_2: "), shown


def test_each_phase_has_its_bar_and_quiet_has_none() -> None:
    """After resolving, the phases that lift (the product lines and d2 of an E3 page; the Mahowald invariants of
    each M_k, printed as they are found) show a bar of their own, taken down before any output; --quiet writes
    nothing but the output."""
    raw = on_terminal("resolve", "C2", "--stem", "12", "--max-s", "5", "--threads", "1", "--page", "3")
    assert b"C2: product lines and d2" in raw
    shown = screen(raw)
    assert shown[-1].startswith("C2: ") and "classes on E3" in shown[-1] and "bidegrees" not in "".join(shown)
    lines = list(mahowald_lines(7))
    raw = on_terminal("mahowald-invariant", "--max-k", "7", "--threads", "1")
    assert b"Mahowald invariants through RP_-7_inf" in raw and b"S_2 (standard)" in raw
    assert screen(raw)[:-1] == lines and screen(raw)[-1].startswith("Mahowald invariants through k = 7 in ")
    assert on_terminal("mahowald-invariant", "--max-k", "7", "--threads", "1", "--quiet") == "".join(
        line + "\r\n" for line in lines).encode()


def test_on_an_80_column_terminal_no_line_of_the_chart_wraps() -> None:
    """S_2 through stem 40 needs 85 columns with its axes: on 80 it is cut into panels of stems (0-29, 30-40), each
    with its axes, and the screen holds them and the summary line, no line longer than 80; piped, the same run
    prints the reference's bytes, uncut."""
    raw = on_terminal("resolve", "S_2", "--stem", "40", "--threads", "1", columns=80)
    shown = screen(raw)
    piped = run_cli("resolve", "S_2", "--stem", "40", "--threads", "1", "--quiet").stdout.decode()
    assert "  n\n" not in piped and max(map(len, piped.split("\n"))) == 82  # the reference's rows: 41 cells
    assert shown[:-1] == [line.rstrip() for line in with_axes(piped, 0, 80).splitlines()]
    assert max(map(len, shown)) <= 80 and shown[-1].startswith("S_2: ")
    assert [line.split()[:-1] for line in shown if line.endswith("  n")] == [["0", "10", "20"], ["30", "40"]]
