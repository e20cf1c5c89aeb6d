"""The `nassau` command line: parse, hand the command to its module, and turn every user error into one line.

Every user error ends in one line on stderr and exit status 2; Ctrl-C ends with status 130 and keeps what the save
directory already holds. Outputs are written atomically, so a file that exists is whole. Each command group lives in
a module of its own (resolve, products, secondary, unstable, tools, modules) with its COMMANDS, add_parsers, run and the
ERRORS it raises for bad input; what they share is nassau.cli.common.
"""
from __future__ import annotations

import argparse
import difflib
import re
import sys

from algebra.milnor import warmup
from algebra.module.spec import ModuleError
from nassau.cli import modules, products, resolve, secondary, tools, unstable
from nassau.cli.common import EXIT_INTERRUPTED, EXIT_USAGE, UserError
from nassau.engine.errors import EngineError
from nassau.engine.scheduler import JobFailed
from nassau.store.save_dir import StoreError

GROUPS = (resolve, products, secondary, unstable, tools, modules)
#: What is printed as one line with status 2: bad input found anywhere, by any command.
ERRORS = (UserError, ModuleError, EngineError, StoreError, *(e for group in GROUPS for e in group.ERRORS))


class Parser(argparse.ArgumentParser):
    """argparse's parser (every command's: subparsers take their parent's class), whose errors are one line naming
    the word at fault: an unknown option with the closest one it has (`--stme`: did you mean --stem?), a command
    with the closest command, a missing MODULE that an option taking a list (--products OP ...) read as one more
    item. argparse would print the usage first, and report a required option missing before an unknown one."""

    def parse_known_args(self, args=None, namespace=None):
        self._words = list(sys.argv[1:] if args is None else args)
        if self._commands() and self._unknown_option():  # before the command's parser errs on what it lacks
            self.error("unrecognized arguments")
        namespace, extras = super().parse_known_args(args, namespace)
        if extras and not self._commands():  # a command's parser: what it does not know is an error here, not above
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        return namespace, extras

    def error(self, message: str):
        unknown = self._unknown_option()
        if unknown is not None:
            message = f"unknown option {unknown}" + (_closest(unknown, self._option_string_actions)
                                                     or f"; `{self.prog} --help` lists them")
        elif message.startswith("argument COMMAND: invalid choice: "):
            word = message.split("'")[1]
            message = f"unknown command {word!r}" + _closest(word, self._commands()) + "; `nassau --help` lists them"
        elif message.startswith("the following arguments are required: "):
            missing = message.split(": ", 1)[1].split(",")[0]
            for action in self._actions:
                took = [w for w in action.option_strings if w in self._words]
                if took and action.nargs in ("+", "*"):
                    message += (f" ({took[0]} reads every word after it as one of its items: put {missing} before "
                                f"{took[0]})")
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")

    def _commands(self) -> list[str]:
        return [name for action in self._actions if isinstance(action, argparse._SubParsersAction)
                for name in action.choices]

    def _unknown_option(self) -> str | None:
        """The first word of this parser's own that looks like an option and is none of its options (nor a prefix
        argparse would take for one); the words from a command on (a word that is no option, for the parser of
        commands) are that command's."""
        known = self._option_string_actions
        commands = bool(self._commands())
        for word in getattr(self, "_words", ()):
            if word == "--":
                return None
            if not word.startswith("-") or word == "-" or re.fullmatch(r"-\d+(\.\d*)?", word):
                if commands:
                    return None
                continue
            name = word.split("=", 1)[0]
            if name in known or name[:2] in known and not name.startswith("--"):
                continue
            if self.allow_abbrev and name.startswith("--") and any(o.startswith(name) for o in known):
                continue
            return name
        return None


def _closest(word: str, choices) -> str:
    """' (did you mean X?)' for the choice closest to word (difflib, with _ read as -), or nothing."""
    match = difflib.get_close_matches(word.replace("_", "-"), [c for c in choices if c.startswith("-") ==
                                                                word.startswith("-")], n=1, cutoff=0.6)
    return f" (did you mean {match[0]}?)" if match else ""


class _Version(argparse.Action):
    """--version: the installed package's version, read from its metadata only when asked (reading it costs every
    run 10-20 ms: importlib.metadata's scan of the path and its email parser)."""

    def __call__(self, parser, namespace, values, option_string=None):
        
        from importlib.metadata import version

        parser._print_message(f"nassau {version('nassau')}\n", sys.stdout)
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="nassau",
        description="Compute Ext over the mod-p Steenrod algebra (the Adams E2 page): minimal resolutions, charts, "
                    "products.",
    )
    parser.add_argument("--version", action=_Version, nargs=0, help="print nassau's version and exit")
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
