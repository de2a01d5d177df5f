// The settings logic of the client, without an editor: `npm test` (node's test runner).

import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import {
    chooseInterpreter,
    confirmCommand,
    expand,
    InterpreterSource,
    LaunchError,
    LaunchSettings,
    notifies,
    serverCommand,
    toolLaunch,
} from '../launch';

const none = (): boolean => false;
const settings = (overrides: Partial<LaunchSettings> = {}): LaunchSettings => ({
    path: [],
    interpreter: [],
    importStrategy: 'fromEnvironment',
    args: [],
    ...overrides,
});

describe('chooseInterpreter', () => {
    it('prefers the setting over the Python extension', () => {
        const chosen = chooseInterpreter(['/venv/bin/python', '-X', 'utf8'], ['/other/python']);
        assert.deepEqual(chosen, { argv: ['/venv/bin/python', '-X', 'utf8'], source: InterpreterSource.Setting });
    });

    it('takes the Python extension selection without a setting', () => {
        assert.deepEqual(chooseInterpreter([], ['/selected/python']), {
            argv: ['/selected/python'],
            source: InterpreterSource.PythonExtension,
        });
    });

    it('falls back to python3, and blank setting items do not count', () => {
        assert.deepEqual(chooseInterpreter(['  '], undefined), { argv: ['python3'], source: InterpreterSource.Default });
        assert.deepEqual(chooseInterpreter([], []), { argv: ['python3'], source: InterpreterSource.Default });
    });
});

describe('toolLaunch and serverCommand', () => {
    const venv = chooseInterpreter(['/venv/bin/python'], undefined);

    it('runs the module from the interpreter, the extra arguments after lsp', () => {
        const launch = toolLaunch(settings({ args: ['--debounce-ms', '500'] }), venv, none);
        assert.deepEqual(launch.tool, ['/venv/bin/python', '-m', 'compile_ad_lint']);
        assert.deepEqual(serverCommand(launch, ['--debounce-ms', '500']), {
            command: '/venv/bin/python',
            args: ['-m', 'compile_ad_lint', 'lsp', '--debounce-ms', '500'],
        });
        assert.deepEqual(launch.notes, []);
    });

    it('uses the first path entry that exists, without the interpreter', () => {
        const exists = (file: string) => file === '/b/compile-ad-lint';
        const launch = toolLaunch(settings({ path: ['/a/compile-ad-lint', '/b/compile-ad-lint'] }), venv, exists);
        assert.deepEqual(launch.tool, ['/b/compile-ad-lint']);
        assert.equal(launch.interpreter, undefined);
        assert.deepEqual(serverCommand(launch, []), { command: '/b/compile-ad-lint', args: ['lsp'] });
    });

    it('refuses a path setting none of whose entries exists', () => {
        assert.throws(
            () => toolLaunch(settings({ path: ['/missing/compile-ad-lint'] }), venv, none),
            (error: unknown) => error instanceof LaunchError && /\/missing\/compile-ad-lint/.test(error.message),
        );
    });

    it('says that useBundled bundles nothing and runs from the environment', () => {
        const launch = toolLaunch(settings({ importStrategy: 'useBundled' }), venv, none);
        assert.deepEqual(launch.tool, ['/venv/bin/python', '-m', 'compile_ad_lint']);
        assert.equal(launch.notes.length, 1);
        assert.match(launch.notes[0], /bundles no copy/);
    });
});

describe('expand', () => {
    it('replaces a whole item by a list value and joins a list inside an item', () => {
        const variables = { tool: ['python', '-m', 'compile_ad_lint'], file: '/p/train.py' };
        assert.deepEqual(expand(['${tool}', 'check', '${file}'], variables), [
            'python',
            '-m',
            'compile_ad_lint',
            'check',
            '/p/train.py',
        ]);
        assert.deepEqual(expand(['--run=${tool} ${file}'], variables), ['--run=python -m compile_ad_lint /p/train.py']);
    });

    it('refuses an unknown or unset variable instead of running an empty argument', () => {
        assert.throws(() => expand(['${nope}'], { file: 'x' }), /Unknown variable \$\{nope\}.*\$\{file\}/);
        assert.throws(() => expand(['${workspaceFolder}/x'], { workspaceFolder: undefined }), LaunchError);
    });
});

describe('confirmCommand', () => {
    const interpreter = chooseInterpreter(['/venv/bin/python'], undefined);
    const launch = toolLaunch(settings(), interpreter, none);

    it('builds the default check --confirm command', () => {
        const argv = confirmCommand(
            ['${tool}', 'check', '${file}', '--confirm'],
            launch,
            interpreter,
            '/p/train.py',
            '/p',
            '/p',
            '/home/u',
        );
        assert.deepEqual(argv, ['/venv/bin/python', '-m', 'compile_ad_lint', 'check', '/p/train.py', '--confirm']);
    });

    it('builds the confirm subcommand form with the interpreter running the file', () => {
        const argv = confirmCommand(
            ['${tool}', 'confirm', '${file}', '--', '${interpreter}', '${file}'],
            launch,
            interpreter,
            '/p/train.py',
            '/p',
            undefined,
            undefined,
        );
        assert.deepEqual(argv, [
            '/venv/bin/python',
            '-m',
            'compile_ad_lint',
            'confirm',
            '/p/train.py',
            '--',
            '/venv/bin/python',
            '/p/train.py',
        ]);
    });

    it('refuses an empty template', () => {
        assert.throws(() => confirmCommand([], launch, interpreter, '/p/x.py', '/p', '/p', undefined), LaunchError);
    });
});

describe('notifies', () => {
    it('follows the showNotifications levels', () => {
        const table: Record<string, [boolean, boolean, boolean]> = {
            off: [false, false, false],
            onError: [true, false, false],
            onWarning: [true, true, false],
            always: [true, true, true],
        };
        for (const [setting, [error, warning, info]] of Object.entries(table)) {
            assert.deepEqual(
                [notifies(setting, 'error'), notifies(setting, 'warning'), notifies(setting, 'info')],
                [error, warning, info],
                setting,
            );
        }
    });
});

describe('package.json', () => {
    // The manifest is what the editor reads: its defaults must be the ones the code assumes.
    const manifest = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8'));
    const properties = manifest.contributes.configuration.properties;

    it('contributes the template settings with the defaults the client reads', () => {
        assert.deepEqual(properties['compile-ad-lint.path'].default, []);
        assert.deepEqual(properties['compile-ad-lint.interpreter'].default, []);
        assert.deepEqual(properties['compile-ad-lint.importStrategy'].enum, ['fromEnvironment', 'useBundled']);
        assert.equal(properties['compile-ad-lint.importStrategy'].default, 'fromEnvironment');
        assert.deepEqual(properties['compile-ad-lint.args'].default, []);
        assert.equal(properties['compile-ad-lint.showNotifications'].default, 'onError');
        assert.equal(properties['compile-ad-lint.fixAllOnSave'].default, false);
        assert.deepEqual(properties['compile-ad-lint.confirmCommand'].default, ['${tool}', 'check', '${file}', '--confirm']);
    });

    it('declares the fix-all kind the server offers', () => {
        const kinds = manifest.contributes.codeActions.flatMap((entry: { actions: { kind: string } }) => entry.actions.kind);
        assert.deepEqual(kinds, ['source.fixAll.compile-ad-lint']);
    });
});
