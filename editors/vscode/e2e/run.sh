#!/usr/bin/env bash
# End-to-end test of the VS Code extension in a real VS Code workbench: code-server (VS Code's own
# workbench and extension host, from npm) with the packaged .vsix installed, driven from headless
# Chromium through Playwright. Opens a project holding a CAL002 hazard, checks the diagnostics (with
# their related locations) in the Problems panel, the status item, the output channel, confirm mode,
# the noqa and fix quick fixes and fix-all on save. Prints one line per step.
#
#   editors/vscode/e2e/run.sh            (from anywhere; the repository's .venv must exist)
#
# Environment: PYTHON (default: the repository's .venv/bin/python), E2E_WORK (default: a new temp
# folder; screenshots land in $E2E_WORK/screenshots), E2E_CONFIRM=full|command|skip (the confirm step:
# the shipped `check FILE --confirm`, which runs torch.compile, a minute or more on 2 cores; `check FILE`
# through the same task wiring, as CI runs it; none), E2E_CHROMIUM (default: /usr/bin/chromium).
# Exit status: 0 every step passed, 1 a step failed, 3 what the test needs could not be installed.
# Needs: node 20 (code-server 4.100.3's requirement), npm, a C/C++ toolchain (code-server builds native
# modules), and Debian packages chromium, ripgrep, libkrb5-dev (installed with apt-get when missing
# and running as root). Reaches only the npm registry and the Debian archive.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
extension="$(dirname "$here")"
repo="$(cd "$extension/../.." && pwd)"
python="${PYTHON:-$repo/.venv/bin/python}"
chromium_bin="${E2E_CHROMIUM:-/usr/bin/chromium}"
work="${E2E_WORK:-$(mktemp -d -t compile-ad-lint-vscode-e2e.XXXXXX)}"
mkdir -p "$work"
started=$SECONDS

say() { printf '[setup %4ds] %s\n' "$((SECONDS - started))" "$*"; }
# Exit 3: what the test needs could not be installed (not a verdict on the extension); 1: a step failed.
cannot() { printf '[setup %4ds] CANNOT RUN %s\n' "$((SECONDS - started))" "$*"; exit 3; }
fail() { printf '[setup %4ds] FAIL %s\n' "$((SECONDS - started))" "$*"; exit 1; }

say "work folder: $work"

# -- system packages ------------------------------------------------------------------------------
missing=()
[ -x "$chromium_bin" ] || missing+=(chromium)
command -v rg >/dev/null || missing+=(ripgrep)
[ -e /usr/include/krb5.h ] || [ -e /usr/include/krb5/krb5.h ] || missing+=(libkrb5-dev)
if [ "${#missing[@]}" -gt 0 ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        say "installing Debian packages: ${missing[*]}"
        apt-get update -qq >"$work/apt.log" 2>&1 || cannot "apt-get update failed (see $work/apt.log)"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >>"$work/apt.log" 2>&1 \
            || cannot "apt-get install ${missing[*]} failed (see $work/apt.log)"
    else
        cannot "missing ${missing[*]}: install them (Debian: apt-get install ${missing[*]}) or set E2E_CHROMIUM"
    fi
fi
say "chromium: $("$chromium_bin" --version 2>/dev/null | head -1)"

command -v node >/dev/null && command -v npm >/dev/null || cannot "node and npm are needed (Debian: apt-get install nodejs npm)"
node_major="$(node -p 'process.versions.node.split(".")[0]')"
say "node $(node --version), npm $(npm --version)"

# -- the Python side: the server the extension starts ---------------------------------------------
[ -x "$python" ] || cannot "no Python at $python: make the repository's venv first (see README) or set PYTHON"
"$python" -c 'import compile_ad_lint, pygls' 2>/dev/null \
    || cannot "$python lacks compile-ad-lint or pygls: $python -m pip install -e '$repo[lsp]'"
say "server interpreter: $python (compile-ad-lint $("$python" -c 'import compile_ad_lint; print(compile_ad_lint.__version__)'))"

# -- the extension: build and package the .vsix ---------------------------------------------------
# npm ci again only when the lock file changed since the last install (CI ran it just before).
if [ ! "$extension/node_modules/.package-lock.json" -nt "$extension/package-lock.json" ]; then
    say "installing the extension's dependencies (npm ci)"
    (cd "$extension" && npm ci --no-audit --no-fund >"$work/npm-extension.log" 2>&1) \
        || { tail -n 20 "$work/npm-extension.log"; cannot "npm ci in $extension failed (see $work/npm-extension.log)"; }
fi
say "building the extension (npm run package)"
(cd "$extension" && npm run package >>"$work/npm-extension.log" 2>&1) \
    || { tail -n 20 "$work/npm-extension.log"; fail "building the .vsix failed (see $work/npm-extension.log)"; }
vsix="$extension/compile-ad-lint.vsix"
say "packaged $vsix ($(du -k "$vsix" | cut -f1) KiB)"

# -- code-server and Playwright --------------------------------------------------------------------
if [ ! -x "$here/node_modules/.bin/code-server" ] || [ ! -e "$here/node_modules/code-server/lib/vscode/node_modules/@vscode/ripgrep/bin/rg" ] \
    || [ ! -d "$here/node_modules/playwright-core" ]; then
    say "installing code-server and playwright-core (npm ci: builds code-server's native modules, a few minutes)"
    # @vscode/ripgrep's install downloads rg from GitHub; its download cache (a folder named after
    # the package's version, 1.15.11 in code-server 4.100.3, holding the asset its postinstall.js
    # names) is filled with Debian's rg instead.
    rg_cache="$(node -p 'require("os").tmpdir()')/vscode-ripgrep-cache-1.15.11"
    mkdir -p "$rg_cache"
    tar czf "$rg_cache/ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz" -C "$(dirname "$(command -v rg)")" rg
    # node-gyp builds against the headers of the node that runs it instead of downloading them.
    node_dir="$(dirname "$(dirname "$(command -v node)")")"
    [ -e "$node_dir/include/node/node.h" ] || cannot "no node headers in $node_dir/include/node (Debian: they come with nodejs)"
    force=()
    if [ "$node_major" != 20 ]; then
        say "note: code-server 4.100.3 asks for node 20; forcing node $node_major (untested)"
        force=(FORCE_NODE_VERSION="$node_major")
    fi
    (cd "$here" && env "${force[@]}" npm_config_yes=true npm_config_unsafe_perm=true npm_config_nodedir="$node_dir" \
        npm ci --no-audit --no-fund >"$work/npm-e2e.log" 2>&1) \
        || { tail -n 20 "$work/npm-e2e.log"; cannot "installing code-server failed (see $work/npm-e2e.log; it needs node 20, a C++ toolchain, libkrb5-dev and node's headers in /usr/include/node)"; }
fi
say "code-server $(XDG_CONFIG_HOME="$work/config" XDG_DATA_HOME="$work/data" "$here/node_modules/.bin/code-server" --version 2>/dev/null | tail -1)"

# -- drive it --------------------------------------------------------------------------------------
say "driving VS Code from headless Chromium"
E2E_WORK="$work" E2E_VSIX="$vsix" E2E_PYTHON="$python" E2E_CHROMIUM="$chromium_bin" \
    E2E_FIXTURE="$repo/fixtures/cal002_autograd_imports.py" node "$here/drive.mjs"
say "done in $((SECONDS - started)) s"
