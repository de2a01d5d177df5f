"""Runs a facts script's cases, each in a fresh process, and prints or records their outcomes.

Every facts script in this folder defines ``CASES`` (name -> a function returning the outcome as a
short, version-independent string such as ``tangent None`` or ``raises NotImplementedError``) and
calls ``main(__file__, CASES)``. Options:

  [CASE ...]   run only these cases (default: all)
  --jobs N     run N cases at once
  --json       print one JSON object instead of lines
  --record     write the outcomes into recorded/torch-<version>.json (the installed torch)
  --check      exit 1 when an outcome differs from the record of the installed torch's version

``recorded/torch-<version>.json`` holds, per script, what each case gave on that torch; the
knowledge tables' per-version rows are tested against every recorded file
(tests/knowledge/test_recorded_facts.py).
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import traceback
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

RECORDED = Path(__file__).resolve().parent / "recorded"
#: Printed by a child before the outcome, so that anything the case prints itself is ignored.
_MARK = "@@outcome@@ "


def raised(error: BaseException) -> str:
    """A loud failure as an outcome: the exception's class only (messages change between versions)."""
    return f"raises {type(error).__name__}"


def torch_version() -> str:
    """The installed torch's public version (``2.13.0+cpu`` -> ``2.13.0``), read without importing it."""
    from importlib.metadata import version

    return version("torch").split("+", 1)[0]


def record_path(version: str) -> Path:
    return RECORDED / f"torch-{version}.json"


def _child(cases: dict[str, Callable[[], str]], name: str) -> None:
    try:
        outcome = cases[name]()
    except Exception as error:  # a loud failure is an outcome too
        outcome = raised(error)
        traceback.print_exc()
    print(_MARK + json.dumps(outcome), flush=True)


def _spawn(script: str, name: str) -> str:
    done = subprocess.run([sys.executable, script, "--child", name], capture_output=True, text=True)
    for line in reversed(done.stdout.splitlines()):
        if line.startswith(_MARK):
            return str(json.loads(line[len(_MARK) :]))
    tail = done.stderr.strip().splitlines()[-1:] or ["no output"]
    return f"no outcome (exit {done.returncode}): {tail[0][:200]}"


def main(script: str, cases: dict[str, Callable[[], str]], argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(sys.modules["__main__"].__doc__ or "").splitlines()[0])
    parser.add_argument("cases", nargs="*", metavar="CASE")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--record", action="store_true", help="write the outcomes into recorded/torch-<version>.json")
    parser.add_argument("--check", action="store_true", help="exit 1 when an outcome differs from the record")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    unknown = [name for name in args.cases if name not in cases]
    if unknown:
        parser.error(f"unknown case(s) {', '.join(unknown)}; known: {', '.join(cases)}")
    names = args.cases or list(cases)
    if args.child:
        for name in names:
            _child(cases, name)
        return 0
    key = Path(script).stem
    version = torch_version()
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        outcomes = dict(zip(names, pool.map(lambda name: _spawn(script, name), names)))
    path = record_path(version)
    recorded = json.loads(path.read_text()) if path.is_file() else {}
    seen = recorded.get("facts", {}).get(key, {})
    differ = {name: (seen.get(name), got) for name, got in outcomes.items() if seen.get(name) != got}
    if args.json:
        print(json.dumps({"torch": version, "script": key, "outcomes": outcomes}, indent=2))
    else:
        print(f"torch {version} ({key})")
        for name, got in outcomes.items():
            note = f"   (recorded: {seen[name]})" if name in seen and seen[name] != got else ""
            print(f"{name:55s} {got}{note}", flush=True)
    if args.record:
        RECORDED.mkdir(exist_ok=True)
        recorded.setdefault("torch", version)
        recorded["python"] = platform.python_version()
        recorded.setdefault("facts", {}).setdefault(key, {}).update(outcomes)
        recorded["facts"] = dict(sorted(recorded["facts"].items()))
        path.write_text(json.dumps(recorded, indent=2, sort_keys=False) + "\n")
        print(f"recorded in {path}", file=sys.stderr)
    if args.check and differ:
        for name, (want, got) in differ.items():
            print(f"DIFFERS {name}: recorded {want!r}, got {got!r}", file=sys.stderr)
        return 1
    return 0
