"""Usage errors the way Ruff prints them: the one-line reason first, a did-you-mean when the user
mistyped an option, a command or a choice, then a short usage line and where the help is.

argparse prints its whole usage (14 lines for ``check``) before the reason, and accepts any
unambiguous prefix of an option (``--selec`` silently meant ``--select``): every parser here is
built with ``allow_abbrev=False``, and ``Parser.error`` prints::

    compile-ad-lint: error: unexpected argument '--selec'; did you mean '--select'?
    usage: compile-ad-lint check [OPTIONS] [PATH ...]
    For more information, try 'compile-ad-lint check --help'.
"""

from __future__ import annotations

import argparse
import difflib
import re
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

#: The exit status of a usage error (argparse's too).
EXIT_USAGE = 2

#: ``argument --jobs/-j: message`` as argparse words it; we name the flag the way the user typed it.
_ARGUMENT_PREFIX = re.compile(r"^argument ((?:-{1,2}[\w-]+)(?:/-{1,2}[\w-]+)*|[\w-]+): ")
#: argparse's ``invalid choice: 'jsn' (choose from 'json', 'text')`` (quoted choices on 3.12+ too).
_INVALID_CHOICE = re.compile(r"invalid choice: '(?P<value>[^']*)' \(choose from (?P<choices>.*)\)$")


def suggestion(word: str, candidates: Sequence[str]) -> str | None:
    """The closest of ``candidates`` to ``word`` (a mistyped option, command or value), if any is close."""
    found = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)
    return found[0] if found else None


class Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors put the reason first; options are never abbreviated."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["allow_abbrev"] = False  # ``--selec`` is an error, not ``--select``
        super().__init__(*args, **kwargs)

    def parse_args(self, args: Sequence[str] | None = None, namespace: Any = None) -> Any:  # type: ignore[override]
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            # Unknown arguments of a subcommand end up here, at the top: report them against the
            # subcommand's own options and usage.
            self._command_parser(parsed).unexpected(extras)
        return parsed

    def _command_parser(self, parsed: Any) -> Parser:
        command = getattr(parsed, "command", None)
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction) and command in action.choices:
                chosen = action.choices[command]
                return chosen if isinstance(chosen, Parser) else self
        return self

    def option_strings(self) -> list[str]:
        return [option for action in self._actions for option in action.option_strings]

    def unexpected(self, extras: Sequence[str]) -> NoReturn:
        argument = next((extra for extra in extras if extra.startswith("-") and extra != "-"), extras[0])
        name = argument.split("=", 1)[0]
        message = f"unexpected argument '{argument}'"
        close = suggestion(name, self.option_strings()) if name.startswith("-") else None
        if close is not None:
            message += f"; did you mean '{close}'?"
        self.error(message)

    def error(self, message: str) -> NoReturn:
        match = _ARGUMENT_PREFIX.match(message)
        if match is not None:  # "argument --jobs/-j: ..." -> "--jobs: ..."
            names = match.group(1).split("/")
            name = max(names, key=len)
            message = f"{name if name.startswith('-') else repr(name)[1:-1]}: {message[match.end() :]}"
            if name == "command":
                message = message.removeprefix("command: ")
        choice = _INVALID_CHOICE.search(message)
        if choice is not None:
            choices = re.findall(r"'([^']*)'", choice.group("choices"))
            close = suggestion(choice.group("value"), choices)
            if close is not None:
                message += f"; did you mean '{close}'?"
        sys.stderr.write(f"{self.prog.split()[0]}: error: {message}\n")
        sys.stderr.write(f"usage: {self.short_usage()}\n")
        self.exit(EXIT_USAGE, f"For more information, try '{self.prog} --help'.\n")

    def short_usage(self) -> str:
        """``compile-ad-lint check [OPTIONS] [PATH ...]``: the positionals, the options as one word."""
        words = [self.prog]
        if any(action.option_strings for action in self._actions):
            words.append("[OPTIONS]")
        for action in self._actions:
            if action.option_strings:
                continue
            if isinstance(action, argparse._SubParsersAction):
                words += ["COMMAND", "..."]
                continue
            name = action.metavar if isinstance(action.metavar, str) else action.dest.upper()
            if action.choices is not None and action.metavar is None:
                name = "{" + ",".join(str(choice) for choice in action.choices) + "}"
            if action.nargs == "*":
                words.append(f"[{name} ...]")
            elif action.nargs == "?":
                words.append(f"[{name}]")
            else:
                words.append(name)
        return " ".join(words)


#: Ruff's ``--output-format`` values for its text report: ``full`` (the chain under each finding) and ``concise``.
RUFF_TEXT_FORMATS = ("concise", "full")


class OutputFormat(argparse.Action):
    """``--output-format``: ``--format`` as Ruff spells it (the last of the two given wins), with
    Ruff's text variants: ``full`` is the text report, ``concise`` the text report with
    ``--concise`` (``concise_report``)."""

    def __call__(self, parser, namespace, values, option_string=None):  # type: ignore[no-untyped-def]
        namespace.output_format = values
        namespace.format = "text" if values in RUFF_TEXT_FORMATS else values


def add_output_format(group: Any, formats: Sequence[str], text_variants: bool = True) -> None:
    """``--output-format`` in ``group``, beside the ``--format`` it sets (a Ruff user's spelling);
    Ruff's ``concise`` and ``full`` where the text report has ``--concise``."""
    group.add_argument(
        "--output-format",
        choices=[*formats, *(RUFF_TEXT_FORMATS if text_variants else ())],
        action=OutputFormat,
        dest="format",
        help="Ruff's spelling of --format"
        + ("; 'full' is text, 'concise' is text with --concise" if text_variants else ""),
    )


def concise_report(args: argparse.Namespace) -> bool:
    """Whether the text report is the concise one: ``--concise``, or ``--output-format concise``
    when that is the format the command line settled on."""
    return bool(args.concise) or (args.format == "text" and getattr(args, "output_format", None) == "concise")
