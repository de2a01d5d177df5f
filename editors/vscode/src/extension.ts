// The compile-ad-lint extension: starts `compile-ad-lint lsp` from the selected Python interpreter and
// adds what the protocol does not carry: a status item, fix-all (and on save), confirm mode in a task.

import { execFile } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as vscode from 'vscode';
import {
    CodeActionRequest,
    LanguageClient,
    LanguageClientOptions,
    MessageType,
    RevealOutputChannelOn,
    ServerOptions,
    ShowMessageNotification,
    State,
} from 'vscode-languageclient/node';
import {
    chooseInterpreter,
    confirmCommand,
    Interpreter,
    InterpreterSource,
    Level,
    notifies,
    serverCommand,
    ToolLaunch,
    toolLaunch,
} from './launch';
import { onInterpreterChange, selectedInterpreter } from './python';
import { folderOf, NAMESPACE, readSettings, serverSettingsChanged } from './settings';
import { ServerState, SOURCE, StatusItem } from './status';

/** The server's "fix all" code action kind (`FIX_ALL_KIND` in compile_ad_lint.integrations.lsp). */
export const FIX_ALL_KIND = vscode.CodeActionKind.SourceFixAll.append(SOURCE);
const INSTALL_HINT = 'pip install "compile-ad-lint[lsp]"';
/** How long the interpreter may take to import compile_ad_lint and pygls before the server starts. */
const PROBE_TIMEOUT_MS = 60_000;

let extension: Extension | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
    extension = new Extension(context);
    await extension.start();
}

export async function deactivate(): Promise<void> {
    await extension?.stop();
    extension = undefined;
}

class Extension {
    private readonly log: vscode.LogOutputChannel;
    private readonly status: StatusItem;
    private client: LanguageClient | undefined;
    /** Serializes restarts: a settings change during a start waits for it. */
    private starting: Promise<void> = Promise.resolve();
    private notedOnce = new Set<string>();

    constructor(private readonly context: vscode.ExtensionContext) {
        this.log = vscode.window.createOutputChannel('compile-ad-lint', { log: true });
        this.status = new StatusItem(`${NAMESPACE}.showLogs`);
        context.subscriptions.push(
            this.log,
            this.status,
            vscode.commands.registerCommand(`${NAMESPACE}.restart`, () => this.restart()),
            vscode.commands.registerCommand(`${NAMESPACE}.showLogs`, () => this.log.show()),
            vscode.commands.registerCommand(`${NAMESPACE}.confirmFile`, () => this.confirmFile()),
            vscode.commands.registerCommand(`${NAMESPACE}.fixAll`, () => this.fixAllCommand()),
            vscode.workspace.onDidChangeConfiguration((event) => {
                if (serverSettingsChanged(event)) {
                    void this.restart();
                }
            }),
            vscode.workspace.onWillSaveTextDocument((event) => this.onWillSave(event)),
        );
    }

    async start(): Promise<void> {
        const listener = await onInterpreterChange(() => {
            const settings = readSettings(undefined);
            if (settings.path.length === 0 && settings.interpreter.length === 0) {
                this.log.info('The Python extension selected another interpreter: restarting the server.');
                void this.restart();
            }
        }, this.log);
        if (listener !== undefined) {
            this.context.subscriptions.push(listener);
        }
        await this.restart();
    }

    restart(): Promise<void> {
        this.starting = this.starting.then(() => this.startServer());
        return this.starting;
    }

    async stop(): Promise<void> {
        const client = this.client;
        this.client = undefined;
        if (client !== undefined) {
            try {
                await client.stop();
            } catch (error) {
                this.log.error(`Stopping the server failed: ${String(error)}`);
            }
        }
    }

    private notify(level: Level, message: string): void {
        const logged = { error: this.log.error, warning: this.log.warn, info: this.log.info }[level];
        logged.call(this.log, message);
        if (!notifies(readSettings(undefined).showNotifications, level)) {
            return;
        }
        const show = {
            error: vscode.window.showErrorMessage,
            warning: vscode.window.showWarningMessage,
            info: vscode.window.showInformationMessage,
        }[level];
        void show(message, 'Show Output').then((choice) => {
            if (choice === 'Show Output') {
                this.log.show();
            }
        });
    }

    /** How compile-ad-lint runs for `resource`: the `path` setting, else the chosen interpreter. */
    private async resolveLaunch(resource: vscode.Uri | undefined): Promise<{ launch: ToolLaunch; interpreter: Interpreter }> {
        const settings = readSettings(resource);
        const fromPython =
            settings.interpreter.length === 0 ? await selectedInterpreter(resource, this.log) : undefined;
        const interpreter = chooseInterpreter(settings.interpreter, fromPython);
        const launch = toolLaunch(settings, interpreter, (file) => fs.existsSync(file));
        for (const note of launch.notes) {
            if (!this.notedOnce.has(note)) {
                this.notedOnce.add(note);
                this.log.warn(note);
            }
        }
        return { launch, interpreter };
    }

    private async startServer(): Promise<void> {
        await this.stop();
        this.status.set(ServerState.Starting, '');
        const folder = folderOf(undefined);
        let launch: ToolLaunch;
        try {
            launch = (await this.resolveLaunch(folder?.uri)).launch;
        } catch (error) {
            this.fail(String(error instanceof Error ? error.message : error));
            return;
        }
        const settings = readSettings(folder?.uri);
        const { command, args } = serverCommand(launch, settings.args);
        const commandLine = [command, ...args].join(' ');
        if (launch.interpreter !== undefined) {
            this.log.info(`Interpreter: ${launch.interpreter.argv.join(' ')} (from ${launch.interpreter.source})`);
            const problem = await probe(launch.interpreter);
            if (problem !== undefined) {
                const where = launch.interpreter.argv.join(' ');
                const choose =
                    launch.interpreter.source === InterpreterSource.Setting
                        ? 'or change compile-ad-lint.interpreter'
                        : 'or set compile-ad-lint.interpreter (or select another interpreter in the Python extension)';
                this.fail(
                    `compile-ad-lint cannot run in ${where}: ${problem}. Install it there with ` +
                        `\`${where} -m ${INSTALL_HINT}\`, ${choose}.`,
                );
                return;
            }
        }
        this.log.info(`Server: ${commandLine}`);
        const serverOptions: ServerOptions = {
            command,
            args,
            options: { cwd: folder?.uri.fsPath, env: { ...process.env } },
        };
        const clientOptions: LanguageClientOptions = {
            documentSelector: [{ scheme: 'file', language: 'python' }],
            outputChannel: this.log,
            traceOutputChannel: this.log,
            revealOutputChannelOn: RevealOutputChannelOn.Never,
            // The server reports a broken configuration once; it goes through the notification setting.
            initializationFailedHandler: (error) => {
                this.fail(`The server failed to initialize: ${String(error)}`);
                return false;
            },
        };
        const client = new LanguageClient(NAMESPACE, 'compile-ad-lint', serverOptions, clientOptions);
        client.onNotification(ShowMessageNotification.type, (message) => {
            const level: Level =
                message.type === MessageType.Error ? 'error' : message.type === MessageType.Warning ? 'warning' : 'info';
            this.notify(level, message.message);
        });
        client.onDidChangeState((event) => {
            if (event.newState === State.Running) {
                this.status.set(ServerState.Running, commandLine);
            } else if (event.newState === State.Stopped && this.client === client) {
                this.status.set(ServerState.Stopped, `${commandLine}\n\nThe server stopped: see the output.`);
            }
        });
        this.client = client;
        try {
            await client.start();
        } catch (error) {
            this.client = undefined;
            this.fail(`The server did not start (${commandLine}): ${String(error)}`);
        }
    }

    private fail(message: string): void {
        this.status.set(ServerState.Failed, message);
        this.notify('error', message);
    }

    // -- fix all ----------------------------------------------------------------------------------

    /** The server's fix-all edit for `document`, or undefined when it has none right now. */
    private async fixAllEdit(
        document: vscode.TextDocument,
        token?: vscode.CancellationToken,
    ): Promise<vscode.WorkspaceEdit | undefined> {
        const client = this.client;
        if (client === undefined || client.state !== State.Running) {
            return undefined;
        }
        const whole = new vscode.Range(0, 0, document.lineCount, 0);
        const actions = await client.sendRequest(
            CodeActionRequest.type,
            {
                textDocument: client.code2ProtocolConverter.asTextDocumentIdentifier(document),
                range: client.code2ProtocolConverter.asRange(whole),
                context: { diagnostics: [], only: [FIX_ALL_KIND.value] },
            },
            token,
        );
        for (const action of actions ?? []) {
            if ('kind' in action && action.kind === FIX_ALL_KIND.value && action.edit !== undefined) {
                return client.protocol2CodeConverter.asWorkspaceEdit(action.edit, token);
            }
        }
        return undefined;
    }

    private async fixAllCommand(): Promise<void> {
        const document = vscode.window.activeTextEditor?.document;
        if (document === undefined || document.languageId !== 'python' || document.uri.scheme !== 'file') {
            this.notify('warning', 'compile-ad-lint: Fix All works on a Python file saved on disk.');
            return;
        }
        const edit = await this.fixAllEdit(document);
        if (edit === undefined) {
            void vscode.window.showInformationMessage(
                'compile-ad-lint: no safe fix to apply here (right after an edit, fixes are known again once the file is analyzed).',
            );
            return;
        }
        await vscode.workspace.applyEdit(edit);
    }

    private onWillSave(event: vscode.TextDocumentWillSaveEvent): void {
        const document = event.document;
        if (
            document.languageId !== 'python' ||
            document.uri.scheme !== 'file' ||
            event.reason === vscode.TextDocumentSaveReason.AfterDelay ||
            !readSettings(document.uri).fixAllOnSave
        ) {
            return;
        }
        event.waitUntil(this.fixAllOnSave(document));
    }

    /** The fix-all edits of `document` alone; a fix-all that also edits other files is left to the command. */
    private async fixAllOnSave(document: vscode.TextDocument): Promise<vscode.TextEdit[]> {
        try {
            const edit = await this.fixAllEdit(document);
            if (edit === undefined) {
                return [];
            }
            const entries = edit.entries();
            const others = entries.filter(([uri]) => uri.toString() !== document.uri.toString());
            if (others.length > 0) {
                this.log.warn(
                    `Fix-all on save of ${document.uri.fsPath} skipped: its fixes also edit ` +
                        `${others.map(([uri]) => uri.fsPath).join(', ')}; run "compile-ad-lint: Fix All in This File".`,
                );
                return [];
            }
            const own = entries.find(([uri]) => uri.toString() === document.uri.toString());
            return own === undefined ? [] : own[1];
        } catch (error) {
            this.log.error(`Fix-all on save failed: ${String(error)}`);
            return [];
        }
    }

    // -- confirm mode -----------------------------------------------------------------------------

    private async confirmFile(): Promise<void> {
        const document = vscode.window.activeTextEditor?.document;
        if (document === undefined || document.languageId !== 'python' || document.uri.scheme !== 'file') {
            this.notify('warning', 'compile-ad-lint: confirm mode runs a Python file saved on disk; open one first.');
            return;
        }
        if (document.isDirty && !(await document.save())) {
            this.notify('warning', 'compile-ad-lint: the file was not saved; confirm mode runs what is on disk.');
            return;
        }
        const file = document.uri.fsPath;
        const folder = vscode.workspace.getWorkspaceFolder(document.uri);
        let argv: string[];
        try {
            const { launch, interpreter } = await this.resolveLaunch(document.uri);
            argv = confirmCommand(
                readSettings(document.uri).confirmCommand,
                launch,
                interpreter,
                file,
                path.dirname(file),
                folder?.uri.fsPath,
                os.homedir(),
            );
        } catch (error) {
            this.notify('error', `compile-ad-lint: cannot run confirm mode: ${error instanceof Error ? error.message : error}`);
            return;
        }
        this.log.info(`Confirm mode: ${argv.join(' ')}`);
        const task = new vscode.Task(
            { type: SOURCE, file },
            folder ?? vscode.TaskScope.Workspace,
            `confirm ${path.basename(file)}`,
            SOURCE,
            new vscode.ProcessExecution(argv[0], argv.slice(1), { cwd: folder?.uri.fsPath ?? path.dirname(file) }),
        );
        task.presentationOptions = {
            reveal: vscode.TaskRevealKind.Always,
            panel: vscode.TaskPanelKind.Dedicated,
            clear: true,
            focus: false,
        };
        await vscode.tasks.executeTask(task);
    }
}

/** Why `interpreter` cannot run the server (compile_ad_lint or pygls missing), or undefined when it can. */
function probe(interpreter: Interpreter): Promise<string | undefined> {
    const [command, ...args] = interpreter.argv;
    const script =
        'import importlib.util as u, sys\n' +
        'missing = [m for m in ("compile_ad_lint", "pygls") if u.find_spec(m) is None]\n' +
        'print(" and ".join(missing) + " not installed" if missing else "")\n';
    return new Promise((resolve) => {
        execFile(command, [...args, '-c', script], { timeout: PROBE_TIMEOUT_MS }, (error, stdout, stderr) => {
            const said = stdout.trim();
            if (said !== '') {
                resolve(said);
            } else if (error !== null) {
                resolve(`${error.message.trim()}${stderr.trim() ? `: ${stderr.trim()}` : ''}`);
            } else {
                resolve(undefined);
            }
        });
    });
}
