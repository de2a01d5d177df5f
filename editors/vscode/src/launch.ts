// How the server and the confirm command are run, from the settings: plain data in, plain data out,
// so that it is tested without an editor (src/test/launch.test.ts).

/** The settings that decide how compile-ad-lint runs, as read for one workspace folder. */
export interface LaunchSettings {
    path: string[];
    interpreter: string[];
    importStrategy: string;
    args: string[];
}

/** Where the Python interpreter came from, in the order it is looked for. */
export enum InterpreterSource {
    Setting = 'the compile-ad-lint.interpreter setting',
    PythonExtension = 'the interpreter selected in the Python extension',
    Default = 'python3 on PATH (no interpreter setting, no Python extension)',
}

export interface Interpreter {
    argv: string[];
    source: InterpreterSource;
}

/** A resolved way to run compile-ad-lint: `tool` is the command without a subcommand. */
export interface ToolLaunch {
    tool: string[];
    /** The interpreter that runs it; undefined when `path` names an executable. */
    interpreter: Interpreter | undefined;
    /** Said once in the output channel (e.g. that nothing is bundled). */
    notes: string[];
}

export const DEFAULT_PYTHON = 'python3';
export const MODULE = 'compile_ad_lint';

/** The interpreter: the setting, else the Python extension's selection, else `python3`. */
export function chooseInterpreter(setting: string[], fromPythonExtension: string[] | undefined): Interpreter {
    const configured = setting.filter((part) => part.trim() !== '');
    if (configured.length > 0) {
        return { argv: configured, source: InterpreterSource.Setting };
    }
    if (fromPythonExtension !== undefined && fromPythonExtension.length > 0) {
        return { argv: fromPythonExtension, source: InterpreterSource.PythonExtension };
    }
    return { argv: [DEFAULT_PYTHON], source: InterpreterSource.Default };
}

/**
 * How to run compile-ad-lint: the first existing `path` entry, else `<interpreter> -m compile_ad_lint`.
 * Throws `LaunchError` when `path` is set and none of its entries exists (a typo must not silently
 * fall back to another installation).
 */
export function toolLaunch(
    settings: LaunchSettings,
    interpreter: Interpreter,
    exists: (file: string) => boolean,
): ToolLaunch {
    const notes: string[] = [];
    const paths = settings.path.filter((part) => part.trim() !== '');
    if (paths.length > 0) {
        const found = paths.find(exists);
        if (found === undefined) {
            throw new LaunchError(
                `None of the executables in compile-ad-lint.path exists: ${paths.join(', ')}`,
            );
        }
        return { tool: [found], interpreter: undefined, notes };
    }
    if (settings.importStrategy === 'useBundled') {
        notes.push(
            'compile-ad-lint.importStrategy is "useBundled", but this extension bundles no copy of ' +
                'compile-ad-lint: running the one installed in the interpreter (as "fromEnvironment").',
        );
    }
    return { tool: [...interpreter.argv, '-m', MODULE], interpreter, notes };
}

/** The server's command line: the tool, `lsp`, then the user's extra arguments. */
export function serverCommand(launch: ToolLaunch, args: string[]): { command: string; args: string[] } {
    const [command, ...rest] = launch.tool;
    return { command, args: [...rest, 'lsp', ...args] };
}

export class LaunchError extends Error {}

/** Values for `${name}` in settings; a list value replaces a whole item by several. */
export type Variables = Record<string, string | string[] | undefined>;

/**
 * Expands `${name}` in each item. An item that is exactly `${name}` with a list value becomes that
 * list's items (so `${tool}` can be `python -m compile_ad_lint`); inside a longer item a list is
 * joined with spaces. An unknown or unset variable is an error, not an empty string.
 */
export function expand(items: string[], variables: Variables): string[] {
    const result: string[] = [];
    for (const item of items) {
        const whole = /^\$\{([A-Za-z]+)\}$/.exec(item);
        if (whole !== null) {
            const value = lookUp(variables, whole[1]);
            result.push(...(Array.isArray(value) ? value : [value]));
            continue;
        }
        result.push(
            item.replace(/\$\{([A-Za-z]+)\}/g, (_match, name: string) => {
                const value = lookUp(variables, name);
                return Array.isArray(value) ? value.join(' ') : value;
            }),
        );
    }
    return result;
}

function lookUp(variables: Variables, name: string): string | string[] {
    const value = Object.prototype.hasOwnProperty.call(variables, name) ? variables[name] : undefined;
    if (value === undefined) {
        const known = Object.keys(variables)
            .filter((key) => variables[key] !== undefined)
            .map((key) => '${' + key + '}');
        throw new LaunchError(`Unknown variable \${${name}} (known here: ${known.join(', ')})`);
    }
    return value;
}

/** The confirm command for `file`, from the `compile-ad-lint.confirmCommand` template. */
export function confirmCommand(
    template: string[],
    launch: ToolLaunch,
    interpreter: Interpreter,
    file: string,
    fileDirname: string,
    workspaceFolder: string | undefined,
    userHome: string | undefined,
): string[] {
    if (template.length === 0) {
        throw new LaunchError('compile-ad-lint.confirmCommand is empty');
    }
    const argv = expand(template, {
        tool: launch.tool,
        interpreter: interpreter.argv,
        file,
        fileDirname,
        workspaceFolder,
        userHome,
    });
    if (argv.length === 0 || argv[0] === '') {
        throw new LaunchError('compile-ad-lint.confirmCommand names no program to run');
    }
    return argv;
}

export type NotificationSetting = 'off' | 'onError' | 'onWarning' | 'always';
export type Level = 'error' | 'warning' | 'info';

/** Whether a message of `level` pops up under the `showNotifications` setting. */
export function notifies(setting: string, level: Level): boolean {
    switch (setting) {
        case 'always':
            return true;
        case 'onWarning':
            return level !== 'info';
        case 'onError':
            return level === 'error';
        default:
            return false;
    }
}
