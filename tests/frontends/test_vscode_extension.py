"""The VS Code extension's contract with the server, the CLI and its documentation (without node):
the manifest's fix-all kind is the server's, the command lines the client builds parse with the CLI's
parser, and docs/vscode.md documents every setting and command the manifest contributes. The client's
own logic is tested by `npm test` in editors/vscode, the whole extension by editors/vscode/e2e/run.sh."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from compile_ad_lint.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]
EXTENSION = ROOT / "editors" / "vscode"
MANIFEST = json.loads((EXTENSION / "package.json").read_text(encoding="utf-8"))
SETTINGS = MANIFEST["contributes"]["configuration"]["properties"]
COMMANDS = MANIFEST["contributes"]["commands"]
DOCS = (ROOT / "docs" / "vscode.md").read_text(encoding="utf-8")


def test_the_manifest_declares_the_servers_fix_all_kind():
    lsp = pytest.importorskip("compile_ad_lint.integrations.lsp")
    kinds = [entry["actions"]["kind"] for entry in MANIFEST["contributes"]["codeActions"]]
    assert kinds == [lsp.FIX_ALL_KIND]


def test_the_client_filters_on_the_servers_diagnostic_source():
    # The status item counts the diagnostics whose source is the server's; the fix-all kind is built from it.
    lsp = pytest.importorskip("compile_ad_lint.integrations.lsp")
    status = (EXTENSION / "src" / "status.ts").read_text(encoding="utf-8")
    assert re.search(r"export const SOURCE = '([^']+)';", status).group(1) == lsp.SOURCE


def test_the_server_command_line_parses():
    # launch.ts runs `<interpreter> -m compile_ad_lint lsp [args]`; the documented example of args.
    args = build_parser().parse_args(["lsp", "--debounce-ms", "500"])
    assert (args.command, args.debounce_ms) == ("lsp", 500)
    assert (ROOT / "src" / "compile_ad_lint" / "__main__.py").is_file()


def test_the_default_confirm_command_parses_as_confirm_mode():
    default = SETTINGS["compile-ad-lint.confirmCommand"]["default"]
    assert default[0] == "${tool}"
    argv = [part.replace("${file}", "train.py") for part in default[1:]]
    args = build_parser().parse_args(argv)
    assert (args.command, args.confirm) == ("check", True)


def test_settings_follow_the_python_tools_template():
    for name in ("path", "interpreter", "importStrategy", "args", "showNotifications"):
        assert f"compile-ad-lint.{name}" in SETTINGS
    assert SETTINGS["compile-ad-lint.importStrategy"]["enum"] == ["fromEnvironment", "useBundled"]
    # The description must not promise a bundled copy: nothing is bundled.
    bundled = SETTINGS["compile-ad-lint.importStrategy"]["enumDescriptions"][1]
    assert "bundles no copy" in bundled


@pytest.mark.parametrize("setting", sorted(SETTINGS))
def test_every_setting_is_documented_with_its_default(setting):
    row = next((line for line in DOCS.splitlines() if line.startswith(f"| `{setting}` |")), None)
    assert row is not None, f"docs/vscode.md has no table row for {setting}"
    assert f"`{json.dumps(SETTINGS[setting]['default'], separators=(', ', ': '))}`" in row


@pytest.mark.parametrize("command", COMMANDS, ids=lambda command: command["command"])
def test_every_command_is_documented(command):
    assert f"`{command['category']}: {command['title']}`" in DOCS


def test_the_build_outputs_are_not_committed():
    ignored = (ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()
    assert {"node_modules/", "editors/vscode/out/", "*.vsix"} <= set(ignored)
    assert (EXTENSION / "package-lock.json").is_file()
    assert (EXTENSION / "e2e" / "package-lock.json").is_file()
