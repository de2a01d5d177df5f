// The interpreter selected in the Python extension (ms-python.python), when it is installed.
// Its API is reached through the extension's exports; only the few members used here are typed.

import * as vscode from 'vscode';

const PYTHON_EXTENSION = 'ms-python.python';

interface EnvironmentPath {
    path: string;
}

interface ResolvedEnvironment {
    executable: { uri?: vscode.Uri };
}

interface PythonEnvironments {
    getActiveEnvironmentPath(resource?: vscode.Uri): EnvironmentPath;
    resolveEnvironment(environment: EnvironmentPath | string): Promise<ResolvedEnvironment | undefined>;
    onDidChangeActiveEnvironmentPath: vscode.Event<unknown>;
}

async function environments(log: vscode.LogOutputChannel): Promise<PythonEnvironments | undefined> {
    const extension = vscode.extensions.getExtension<{ environments?: PythonEnvironments }>(PYTHON_EXTENSION);
    if (extension === undefined) {
        return undefined;
    }
    try {
        const api = extension.isActive ? extension.exports : await extension.activate();
        return api?.environments;
    } catch (error) {
        log.warn(`The Python extension did not activate: ${String(error)}`);
        return undefined;
    }
}

/** The selected interpreter's executable, or undefined without the Python extension or a selection. */
export async function selectedInterpreter(
    resource: vscode.Uri | undefined,
    log: vscode.LogOutputChannel,
): Promise<string[] | undefined> {
    const api = await environments(log);
    if (api === undefined) {
        return undefined;
    }
    try {
        const resolved = await api.resolveEnvironment(api.getActiveEnvironmentPath(resource));
        const executable = resolved?.executable.uri?.fsPath;
        return executable ? [executable] : undefined;
    } catch (error) {
        log.warn(`The Python extension could not resolve the selected interpreter: ${String(error)}`);
        return undefined;
    }
}

/** Calls `listener` when the Python extension's selected interpreter changes. */
export async function onInterpreterChange(
    listener: () => void,
    log: vscode.LogOutputChannel,
): Promise<vscode.Disposable | undefined> {
    const api = await environments(log);
    return api?.onDidChangeActiveEnvironmentPath(() => listener());
}
