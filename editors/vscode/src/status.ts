// The status bar item: the server's state and the active Python file's finding count; a click shows
// the output channel.

import * as vscode from 'vscode';

export const SOURCE = 'compile-ad-lint';

export enum ServerState {
    Starting = 'starting',
    Running = 'running',
    Failed = 'failed',
    Stopped = 'stopped',
}

export class StatusItem implements vscode.Disposable {
    private readonly item: vscode.StatusBarItem;
    private readonly subscriptions: vscode.Disposable[] = [];
    private state = ServerState.Stopped;
    private detail = '';

    constructor(showLogsCommand: string) {
        this.item = vscode.window.createStatusBarItem('compile-ad-lint.status', vscode.StatusBarAlignment.Right, 100);
        this.item.name = 'compile-ad-lint';
        this.item.command = showLogsCommand;
        this.subscriptions.push(
            vscode.window.onDidChangeActiveTextEditor(() => this.render()),
            vscode.languages.onDidChangeDiagnostics((event) => {
                const active = vscode.window.activeTextEditor?.document.uri.toString();
                if (active !== undefined && event.uris.some((uri) => uri.toString() === active)) {
                    this.render();
                }
            }),
        );
        this.render();
    }

    set(state: ServerState, detail: string): void {
        this.state = state;
        this.detail = detail;
        this.render();
    }

    private render(): void {
        const document = vscode.window.activeTextEditor?.document;
        const python = document?.languageId === 'python';
        const tooltip = new vscode.MarkdownString(undefined, true);
        tooltip.appendText(`compile-ad-lint: server ${this.state}`);
        if (this.detail) {
            tooltip.appendText(`\n\n${this.detail}`);
        }
        this.item.backgroundColor = undefined;
        switch (this.state) {
            case ServerState.Starting:
                this.item.text = '$(sync~spin) compile-ad-lint';
                break;
            case ServerState.Failed:
            case ServerState.Stopped:
                this.item.text = '$(error) compile-ad-lint';
                this.item.backgroundColor = new vscode.ThemeColor('statusBarItem.errorBackground');
                break;
            case ServerState.Running: {
                const count = document === undefined ? 0 : findings(document.uri);
                this.item.text = count > 0 ? `$(warning) compile-ad-lint: ${count}` : '$(check) compile-ad-lint';
                if (python) {
                    tooltip.appendText(`\n\n${count} ${count === 1 ? 'finding' : 'findings'} in this file`);
                }
                break;
            }
        }
        tooltip.appendText('\n\nClick to show the output.');
        this.item.tooltip = tooltip;
        // Shown with a Python file, and whenever the server is not running (so that a failure is seen).
        if (python || this.state === ServerState.Failed) {
            this.item.show();
        } else {
            this.item.hide();
        }
    }

    dispose(): void {
        this.subscriptions.forEach((subscription) => subscription.dispose());
        this.item.dispose();
    }
}

function findings(uri: vscode.Uri): number {
    return vscode.languages.getDiagnostics(uri).filter((diagnostic) => diagnostic.source === SOURCE).length;
}
