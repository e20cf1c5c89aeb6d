"""The `nassau` command line: argument parsing and dispatch to the engine."""
from __future__ import annotations

import argparse
import sys


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="nassau",
        description="Compute Ext over the mod-2 Steenrod algebra (the Adams E2 page) for finite modules.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    res = sub.add_parser("resolve", help="resolve a module through a stem and print its Ext chart")
    res.add_argument("module", metavar="MODULE", help="module name (S_2, C2, Joker, tmf2, ...), NAME[shift], or a JSON path")
    res.add_argument("--stem", type=int, required=True, metavar="N", help="compute all stems n <= N")
    res.add_argument("--max-s", type=int, default=15, metavar="S", help="compute Adams filtrations s <= S (default 15)")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    print("nassau: the engine is not built yet", file=sys.stderr)
    return 2
