"""The `nassau` command line: parse, hand the command to its module, and turn every user error into one line.

Every user error ends in one line on stderr and exit status 2; Ctrl-C ends with status 130 and keeps what the save
directory already holds. Outputs are written atomically, so a file that exists is whole. Each command group lives in
a module of its own (resolve, products, secondary, unstable, tools) with its COMMANDS, add_parsers, run and the
ERRORS it raises for bad input; what they share is nassau.cli.common.
"""
from __future__ import annotations

import argparse
import sys
from importlib.metadata import version

from algebra.milnor import warmup
from algebra.module.spec import ModuleError
from nassau.cli import products, resolve, secondary, tools, unstable
from nassau.cli.common import EXIT_INTERRUPTED, EXIT_USAGE, UserError
from nassau.engine.errors import EngineError
from nassau.engine.scheduler import JobFailed
from nassau.store.save_dir import StoreError

GROUPS = (resolve, products, secondary, unstable, tools)
#: What is printed as one line with status 2: bad input found anywhere, by any command.
ERRORS = (UserError, ModuleError, EngineError, StoreError, *(e for group in GROUPS for e in group.ERRORS))


class Parser(argparse.ArgumentParser):
    """argparse's parser (every command's: subparsers take their parent's class), whose error for a missing MODULE
    says when an option taking a list (--products OP ...) read it as one more item."""

    def parse_known_args(self, args=None, namespace=None):
        self._words = list(sys.argv[1:] if args is None else args)
        return super().parse_known_args(args, namespace)

    def error(self, message: str):
        if message.startswith("the following arguments are required: "):
            missing = message.split(": ", 1)[1].split(",")[0]
            for action in self._actions:
                took = [w for w in action.option_strings if w in self._words]
                if took and action.nargs in ("+", "*"):
                    message += (f" ({took[0]} reads every word after it as one of its items: put {missing} before "
                                f"{took[0]})")
        super().error(message)


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="nassau",
        description="Compute Ext over the mod-p Steenrod algebra (the Adams E2 page): minimal resolutions, charts, "
                    "products.",
    )
    parser.add_argument("--version", action="version", version=f"nassau {version('nassau')}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for group in GROUPS:
        group.add_parsers(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    warmup.start()  # on an empty kernel cache only: compiles on the second core while this run starts
    group = next(g for g in GROUPS if args.command in g.COMMANDS)
    try:
        return group.run(args)
    except KeyboardInterrupt:
        print("nassau: interrupted" + _saved_note(args), file=sys.stderr)
        return EXIT_INTERRUPTED
    except ERRORS as exc:
        print(f"nassau: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except JobFailed as exc:
        cause = exc.__cause__
        if isinstance(cause, (ModuleError, EngineError, StoreError, OSError)):
            print(f"nassau: error: {cause}", file=sys.stderr)
            return EXIT_USAGE
        raise


def _saved_note(args: argparse.Namespace) -> str:
    save = getattr(args, "save_dir", None)
    return f"; finished bidegrees are kept in {save}" if save else ""
