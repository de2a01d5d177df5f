// The extension's settings as plain values, with ${workspaceFolder} and ${userHome} expanded.

import * as os from 'os';
import * as vscode from 'vscode';
import { expand, LaunchSettings, Variables } from './launch';

export const NAMESPACE = 'compile-ad-lint';

/** The settings whose change needs a new server. */
const SERVER_SETTINGS = ['path', 'interpreter', 'importStrategy', 'args'];

export interface Settings extends LaunchSettings {
    showNotifications: string;
    fixAllOnSave: boolean;
    confirmCommand: string[];
}

export function pathVariables(folder: vscode.WorkspaceFolder | undefined): Variables {
    return { workspaceFolder: folder?.uri.fsPath, userHome: os.homedir() };
}

export function readSettings(scope: vscode.Uri | vscode.WorkspaceFolder | undefined): Settings {
    const config = vscode.workspace.getConfiguration(NAMESPACE, scope);
    const folder = folderOf(scope);
    const paths = (key: string) => expand(config.get<string[]>(key) ?? [], pathVariables(folder));
    return {
        path: paths('path'),
        interpreter: paths('interpreter'),
        importStrategy: config.get<string>('importStrategy') ?? 'fromEnvironment',
        args: config.get<string[]>('args') ?? [],
        showNotifications: config.get<string>('showNotifications') ?? 'onError',
        fixAllOnSave: config.get<boolean>('fixAllOnSave') ?? false,
        // Expanded when the command runs: it also has ${file} and ${tool}.
        confirmCommand: config.get<string[]>('confirmCommand') ?? [],
    };
}

export function folderOf(scope: vscode.Uri | vscode.WorkspaceFolder | undefined): vscode.WorkspaceFolder | undefined {
    if (scope === undefined) {
        return vscode.workspace.workspaceFolders?.[0];
    }
    if (scope instanceof vscode.Uri) {
        return vscode.workspace.getWorkspaceFolder(scope) ?? vscode.workspace.workspaceFolders?.[0];
    }
    return scope;
}

export function serverSettingsChanged(event: vscode.ConfigurationChangeEvent): boolean {
    return SERVER_SETTINGS.some((key) => event.affectsConfiguration(`${NAMESPACE}.${key}`));
}
