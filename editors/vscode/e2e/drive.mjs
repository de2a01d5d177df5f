// Drives VS Code's workbench (code-server) from headless Chromium through the extension's features.
// Started by run.sh, which installs what this needs and passes it in the environment:
//   E2E_WORK        a fresh folder (project, code-server's data, screenshots)
//   E2E_VSIX        the packaged extension
//   E2E_PYTHON      an interpreter with compile-ad-lint and pygls installed
//   E2E_FIXTURE     the CAL002 fixture copied into the project
//   E2E_CHROMIUM    the Chromium executable (default /usr/bin/chromium)
//   E2E_CONFIRM     full (default): the confirm command as shipped, `check FILE --confirm`, which runs
//                   torch.compile (a minute or more on 2 cores); command: the same command wiring (a
//                   task in a terminal) with `check FILE` only, which CI runs; skip: no confirm step
// Prints one line per step ("PASS"/"FAIL"/"SKIP"); exits 1 on the first failed step, 3 when the
// browser cannot start (nothing was tested).

import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

const env = process.env;
const work = env.E2E_WORK;
const codeServer = join(import.meta.dirname, 'node_modules', '.bin', 'code-server');
const shots = join(work, 'screenshots');
const project = join(work, 'project');
const userData = join(work, 'code-server-user');
const extensions = join(work, 'code-server-extensions');
const STEP_TIMEOUT_MS = 60_000;
const confirmMode = env.E2E_CONFIRM || 'full';
const started = Date.now();
let shotNumber = 0;
let page;
let server;
let browser;

function log(status, step, detail = '') {
    const seconds = ((Date.now() - started) / 1000).toFixed(1).padStart(6);
    console.log(`[${seconds}s] ${status} ${step}${detail ? `: ${detail}` : ''}`);
}

/** A screenshot of the page under `name`, its path ('' before the browser starts or if it failed). */
async function screenshot(name) {
    if (page === undefined) {
        return '';
    }
    const file = join(shots, `${String(++shotNumber).padStart(2, '0')}-${name}.png`);
    return page.screenshot({ path: file }).then(
        () => file,
        () => '',
    );
}

async function step(name, body) {
    try {
        const detail = await body();
        const shot = await screenshot(name.replace(/[^a-z0-9]+/gi, '-').toLowerCase());
        log('PASS', name, `${detail ?? ''}${shot ? ` [${shot}]` : ''}`);
    } catch (error) {
        const shot = await screenshot('failed');
        log('FAIL', name, `${error instanceof Error ? error.message : error}${shot ? ` [${shot}]` : ''}`);
        await cleanUp();
        process.exit(1);
    }
}

async function cleanUp() {
    await browser?.close().catch(() => undefined);
    if (server && server.exitCode === null) {
        process.kill(-server.pid, 'SIGTERM');
    }
}

function freePort() {
    return new Promise((resolve, reject) => {
        const probe = createServer();
        probe.once('error', reject);
        probe.listen(0, '127.0.0.1', () => {
            const { port } = probe.address();
            probe.close(() => resolve(port));
        });
    });
}

/** Polls `check` (returning a truthy value when done) until `timeout`; the last value explains a failure. */
async function until(what, check, timeout = STEP_TIMEOUT_MS) {
    const deadline = Date.now() + timeout;
    let last;
    for (;;) {
        last = await check();
        if (last && last.ok) {
            return last.value;
        }
        if (Date.now() > deadline) {
            throw new Error(`timed out after ${timeout / 1000}s waiting for ${what}${last?.seen ? ` (saw: ${last.seen})` : ''}`);
        }
        await page.waitForTimeout(250);
    }
}

/** Runs a command by its title through the command palette. */
async function runCommand(title) {
    await page.keyboard.press('F1');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor({ state: 'visible' });
    await input.fill(`>${title}`);
    const row = page.locator('.quick-input-widget .monaco-list-row', { hasText: title }).first();
    await row.waitFor({ state: 'visible', timeout: 15_000 });
    await page.keyboard.press('Enter');
}

async function openFile(name) {
    await page.keyboard.press('F1');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor({ state: 'visible' });
    await input.fill(name);
    await page.locator('.quick-input-widget .monaco-list-row', { hasText: name }).first().waitFor();
    await page.keyboard.press('Enter');
    await page.locator(`.tab.active[aria-label*="${name}"]`).waitFor({ timeout: 15_000 });
}

async function goToLine(line, column) {
    await page.locator('.editor-instance .monaco-editor textarea').first().focus();
    await page.keyboard.press('Control+G');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor({ state: 'visible' });
    await input.fill(`:${line}:${column}`);
    await page.keyboard.press('Enter');
}

/** The Problems panel's rows (findings and their related locations) as text. */
async function problems() {
    await showProblems();
    return page.locator('.markers-panel .monaco-list-row').evaluateAll((rows) =>
        rows.map((row) => row.textContent || ''),
    );
}

async function quickFix(line, column, title) {
    await goToLine(line, column);
    await page.keyboard.press('Control+.');
    const item = page.locator('.action-widget .monaco-list-row', { hasText: title }).first();
    await item.waitFor({ state: 'visible', timeout: 20_000 });
    const offered = await page.locator('.action-widget .monaco-list-row').allTextContents();
    await screenshot(`quick-fix-menu-line-${line}`);
    // The menu is chosen from with the keyboard, as a person does (a pointer block covers it for clicks).
    for (let moves = 0; moves <= offered.length; moves++) {
        const focused = await page.locator('.action-widget .monaco-list-row.focused').getAttribute('aria-label');
        if (focused?.includes(title)) {
            await page.keyboard.press('Enter');
            return offered.map((text) => text.trim()).filter(Boolean);
        }
        await page.keyboard.press('ArrowDown');
    }
    throw new Error(`could not move to "${title}" in the quick fix menu: ${offered.join(' | ')}`);
}

/** The active editor's visible lines (the text around the cursor), spaces normalized. */
async function visibleText() {
    const texts = await page.locator('.editor-instance .monaco-editor .view-lines').allInnerTexts();
    return texts.join('\n').replace(/\u00a0/g, ' ');
}

/** The compile-ad-lint status bar item's text. */
async function statusText() {
    const texts = await page.locator('.statusbar-item').allTextContents();
    return (texts.find((text) => text.includes('compile-ad-lint')) ?? '').trim();
}

/** Shows the Problems panel (Ctrl+Shift+M toggles it, so only when it is not shown). */
async function showProblems() {
    if (!(await page.locator('.markers-panel').isVisible())) {
        await page.keyboard.press('Control+Shift+M');
        await page.locator('.markers-panel').waitFor({ state: 'visible' });
    }
}

async function main() {
    mkdirSync(shots, { recursive: true });
    mkdirSync(project, { recursive: true });
    mkdirSync(join(userData, 'User'), { recursive: true });
    // Two copies of the CAL002 fixture: one for the quick fixes, one for fix-all on save.
    copyFileSync(env.E2E_FIXTURE, join(project, 'train.py'));
    copyFileSync(env.E2E_FIXTURE, join(project, 'train_on_save.py'));
    writeFileSync(
        join(userData, 'User', 'settings.json'),
        JSON.stringify(
            {
                'compile-ad-lint.interpreter': [env.E2E_PYTHON],
                'compile-ad-lint.fixAllOnSave': true,
                ...(confirmMode === 'command' ? { 'compile-ad-lint.confirmCommand': ['${tool}', 'check', '${file}'] } : {}),
                'workbench.startupEditor': 'none',
                'security.workspace.trust.enabled': false,
                'telemetry.telemetryLevel': 'off',
                'extensions.autoUpdate': false,
                'extensions.autoCheckUpdates': false,
                'update.mode': 'none',
                'workbench.enableExperiments': false,
                'workbench.tips.enabled': false,
                'editor.minimap.enabled': false,
                'files.autoSave': 'off',
                // The DOM renderer, so that the terminal's text can be read back.
                'terminal.integrated.gpuAcceleration': 'off',
            },
            null,
            2,
        ),
    );

    await step('install the .vsix into code-server', async () => {
        const result = spawnSync(
            codeServer,
            ['--user-data-dir', userData, '--extensions-dir', extensions, '--install-extension', env.E2E_VSIX],
            { encoding: 'utf8', env: { ...env, XDG_CONFIG_HOME: join(work, 'config'), XDG_DATA_HOME: join(work, 'data') } },
        );
        const said = `${result.stdout}${result.stderr}`.trim().split('\n').pop();
        if (result.status !== 0 || !/successfully installed/i.test(said)) {
            throw new Error(`code-server --install-extension exited ${result.status}: ${said}`);
        }
        return said;
    });

    const port = await freePort();
    await step('start code-server', async () => {
        server = spawn(
            codeServer,
            [
                '--auth', 'none',
                '--bind-addr', `127.0.0.1:${port}`,
                '--user-data-dir', userData,
                '--extensions-dir', extensions,
                '--disable-telemetry',
                '--disable-update-check',
                '--disable-workspace-trust',
                '--disable-getting-started-override',
                '--ignore-last-opened',
                project,
            ],
            {
                detached: true,
                env: { ...env, XDG_CONFIG_HOME: join(work, 'config'), XDG_DATA_HOME: join(work, 'data') },
                stdio: ['ignore', 'pipe', 'pipe'],
            },
        );
        let output = '';
        server.stdout.on('data', (data) => (output += data));
        server.stderr.on('data', (data) => (output += data));
        const deadline = Date.now() + STEP_TIMEOUT_MS;
        while (!/HTTP server listening/.test(output)) {
            if (server.exitCode !== null || Date.now() > deadline) {
                throw new Error(`code-server did not start: ${output.trim().split('\n').slice(-5).join(' | ')}`);
            }
            await new Promise((resolve) => setTimeout(resolve, 200));
        }
        writeFileSync(join(work, 'code-server.log'), output);
        server.stdout.on('data', () => writeFileSync(join(work, 'code-server.log'), output));
        return `http://127.0.0.1:${port}/ (${output.match(/code-server [^\n]*/)?.[0] ?? 'version unknown'})`;
    });

    try {
        browser = await chromium.launchPersistentContext(join(work, 'chromium-profile'), {
            executablePath: env.E2E_CHROMIUM || '/usr/bin/chromium',
            headless: true,
            viewport: { width: 1400, height: 900 },
            args: [
                '--headless',
                '--no-sandbox',
                '--disable-gpu',
                '--disable-quic',
                '--no-first-run',
                '--disable-background-networking',
                '--disable-component-update',
                '--disable-sync',
            ],
        });
    } catch (error) {
        log('CANNOT RUN', 'start headless Chromium', error instanceof Error ? error.message.split('\n')[0] : String(error));
        await cleanUp();
        process.exit(3);
    }
    page = browser.pages()[0] ?? (await browser.newPage());

    await step('open the project in the workbench', async () => {
        await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(project)}`);
        await page.locator('.monaco-workbench').waitFor({ timeout: STEP_TIMEOUT_MS });
        await page.locator('.explorer-folders-view .monaco-list-row', { hasText: 'train.py' }).first().waitFor();
        return `folder ${project}`;
    });

    await step('open train.py: the status item shows the server', async () => {
        await openFile('train.py');
        return until('the compile-ad-lint status item', async () => {
            const texts = await page.locator('.statusbar-item').allTextContents();
            const item = texts.find((text) => text.includes('compile-ad-lint'));
            return { ok: item !== undefined, value: `status bar: "${item?.trim()}"`, seen: texts.join(' | ') };
        });
    });

    await step('the Problems panel lists the two CAL002 findings with their related locations', async () => {
        await showProblems();
        const rows = await until(
            'two CAL002 findings in Problems',
            async () => {
                const rows = await problems();
                const findings = rows.filter((row) => row.includes('CAL002'));
                return { ok: findings.length === 2, value: rows, seen: rows.join(' || ').slice(0, 400) };
            },
            90_000,
        );
        const related = rows.filter((row) => row.includes('compiled call ran with autocast on'));
        if (related.length < 2) {
            throw new Error(`related locations not listed: ${rows.join(' || ')}`);
        }
        const status = (await page.locator('.statusbar-item').allTextContents()).find((t) => t.includes('compile-ad-lint'));
        if (!/compile-ad-lint: 2/.test(status ?? '')) {
            throw new Error(`status item does not count the two findings: "${status}"`);
        }
        return `${rows.filter((row) => row.includes('CAL002')).length} findings, ${related.length} related-location rows, status "${status.trim()}"; first: ${rows.find((row) => row.includes('CAL002')).slice(0, 110)}...`;
    });

    await step('the output channel holds the server log', async () => {
        await runCommand('compile-ad-lint: Show Output');
        return until('the server command line in the output', async () => {
            const text = await page.locator('.output-view, .panel .monaco-editor .view-lines').allInnerTexts();
            const joined = text.join('\n').replace(/\u00a0/g, ' ');
            const line = joined.split('\n').find((l) => l.includes('[info] Server: '));
            return { ok: line !== undefined, value: line?.trim(), seen: joined.slice(-300) };
        });
    });

    if (confirmMode === 'skip') {
        log('SKIP', 'confirm mode on the current file', 'E2E_CONFIRM=skip');
    } else {
        const full = confirmMode !== 'command';
        const title = full
            ? 'confirm mode on the current file runs in a terminal'
            : 'the confirm command runs in a terminal (E2E_CONFIRM=command: `check FILE` without --confirm)';
        await step(title, async () => {
            await openFile('train.py');
            await runCommand('compile-ad-lint: Run Confirm Mode on This File');
            const text = await until(
                'the command to finish in the terminal',
                async () => {
                    // Screen rows: a long line wraps over several, so they are joined without breaks.
                    const rows = await page.locator('.xterm-rows').allInnerTexts();
                    const joined = rows.join('').replace(/\n/g, '').replace(/\u00a0/g, ' ');
                    return { ok: /Found 2 findings/.test(joined), value: joined, seen: joined.slice(-300) };
                },
                300_000,
            );
            const found = text.match(/Found 2 findings[^)]*\)/)?.[0] ?? 'Found 2 findings';
            if (!full) {
                return `the task's terminal shows "${found}"`;
            }
            const verdicts = text.match(/confirm: cpu: [a-z-]+/g) ?? [];
            if (verdicts.length === 0) {
                throw new Error(`no confirm verdict on the terminal screen: ${text.slice(-400)}`);
            }
            return `terminal shows ${verdicts.length} verdict(s) ("${verdicts[0]}") and "${found}"`;
        });
        await showProblems();
    }

    await step('the noqa quick fix clears the first finding', async () => {
        await openFile('train.py');
        const offered = await quickFix(30, 5, 'Suppress CAL002 on this line');
        const left = await until('one CAL002 finding left', async () => {
            const rows = (await problems()).filter((row) => row.includes('CAL002'));
            const status = await statusText();
            return {
                ok: rows.length === 1 && status === 'compile-ad-lint: 1',
                value: rows,
                seen: `status "${status}"; ${rows.join(' || ').slice(0, 300)}`,
            };
        });
        const text = await visibleText();
        const line = text.split('\n').find((l) => l.includes('run_backward(loss)') && l.includes('# noqa: CAL002'));
        if (line === undefined) {
            throw new Error(`no line with run_backward(loss) and # noqa: CAL002 in the editor: ${text.slice(0, 600)}`);
        }
        return `offered [${offered.join(' | ')}]; line 30 now "${line.trim()}"; findings left: ${left.length}`;
    });

    await step('the fix quick fix clears the second finding', async () => {
        const offered = await quickFix(36, 12, 'Wrap the compiled call');
        await until('no CAL002 finding left', async () => {
            const rows = (await problems()).filter((row) => row.includes('CAL002'));
            const status = await statusText();
            return {
                ok: rows.length === 0 && status === 'compile-ad-lint',
                value: true,
                seen: `status "${status}"; ${rows.join(' || ').slice(0, 300)}`,
            };
        });
        const text = await visibleText();
        const patch = text.split('\n').find((l) => l.includes('config.patch(backward_pass_autocast="off")'));
        if (patch === undefined) {
            throw new Error(`the editor shows no config.patch block after the fix: ${text.slice(0, 600)}`);
        }
        return `offered [${offered.join(' | ')}]; the editor now has "${patch.trim()}"; Problems has no CAL002 left`;
    });

    await step('fix-all on save (opt-in setting) fixes train_on_save.py when saved', async () => {
        await openFile('train_on_save.py');
        await until(
            'the findings of train_on_save.py',
            async () => {
                const rows = (await problems()).filter((row) => row.includes('CAL002'));
                return { ok: rows.length === 2, value: rows, seen: rows.join(' || ').slice(0, 300) };
            },
            90_000,
        );
        // An edit, then a save once the server has analyzed the edited text (its fixes are known for
        // that text only): the first finding then moves from line 30 to line 31.
        await goToLine(1, 1);
        await page.keyboard.type('# edited in the end-to-end test\n');
        await until('the findings of the edited text', async () => {
            const rows = (await problems()).filter((row) => row.includes('CAL002'));
            return { ok: rows.some((row) => row.includes('Ln 31, Col 5')), value: rows, seen: rows.join(' || ').slice(0, 300) };
        });
        await page.locator('.editor-instance .monaco-editor textarea').first().focus();
        await page.keyboard.press('Control+S');
        const saved = await until('the saved file to hold the fixes', async () => {
            const text = readFileSync(join(project, 'train_on_save.py'), 'utf8');
            const patches = text.split('backward_pass_autocast="off"').length - 1;
            return { ok: patches === 2, value: patches, seen: `${patches} config.patch blocks on disk` };
        });
        await until('no CAL002 finding left', async () => {
            const rows = (await problems()).filter((row) => row.includes('CAL002'));
            return { ok: rows.length === 0, value: true, seen: rows.join(' || ').slice(0, 300) };
        });
        return `${saved} config.patch blocks written on save; Problems has no CAL002 left`;
    });

    log('DONE', `all steps passed; screenshots in ${shots}`);
    await cleanUp();
}

main().catch(async (error) => {
    log('FAIL', 'driver', error instanceof Error ? error.stack : String(error));
    await cleanUp();
    process.exit(1);
});
