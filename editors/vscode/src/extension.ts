// Starts `mmalint server` for Python files and hands it the `mmalint.*` settings.
//
// The server pulls the settings itself (workspace/configuration) and watches the configuration
// files (a dynamic registration), so this file only decides the command and restarts the server
// when that command changes.
import * as vscode from "vscode";
import {
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  TransportKind,
} from "vscode-languageclient/node";

// Settings that pick the process, not the checks: a change restarts the server.
const COMMAND_SETTINGS = ["mmalint.path", "mmalint.interpreter"];
// Settings the server reads; the others in the section are the extension's own.
const SERVER_SETTINGS = [
  "select",
  "ignore",
  "config",
  "target_jax",
  "unsafe_fixes",
  "report_unused_noqa",
  "debounce_ms",
  "lint_timeout_s",
  "log_level",
];

let client: LanguageClient | undefined;

export function serverCommand(settings: vscode.WorkspaceConfiguration): { command: string; args: string[] } {
  const path = settings.get<string>("path", "").trim();
  if (path) {
    return { command: path, args: ["server"] };
  }
  const interpreter = settings.get<string>("interpreter", "python3").trim() || "python3";
  return { command: interpreter, args: ["-m", "mmalint", "server"] };
}

function initializationOptions(settings: vscode.WorkspaceConfiguration): Record<string, unknown> {
  const options: Record<string, unknown> = {};
  for (const key of SERVER_SETTINGS) {
    const value = settings.get(key);
    if (value !== undefined && value !== null) {
      options[key] = value;
    }
  }
  return options;
}

async function start(context: vscode.ExtensionContext): Promise<void> {
  const settings = vscode.workspace.getConfiguration("mmalint");
  const { command, args } = serverCommand(settings);
  const serverOptions: ServerOptions = {
    run: { command, args, transport: TransportKind.stdio },
    debug: { command, args, transport: TransportKind.stdio },
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [
      { scheme: "file", language: "python" },
      { scheme: "untitled", language: "python" },
    ],
    initializationOptions: initializationOptions(settings),
    // A settings change is notified; the server then pulls the section (workspace/configuration).
    synchronize: { configurationSection: "mmalint" },
    outputChannelName: "mmalint",
  };
  client = new LanguageClient("mmalint", "mmalint", serverOptions, clientOptions);
  try {
    await client.start();
  } catch (error) {
    void vscode.window.showErrorMessage(
      `mmalint: could not start \`${[command, ...args].join(" ")}\`: ${String(error)}. ` +
        "Set mmalint.path or mmalint.interpreter to where mmalint is installed (with the lsp extra).",
    );
  }
}

async function stop(): Promise<void> {
  const running = client;
  client = undefined;
  if (running !== undefined) {
    await running.stop();
  }
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration(async (event) => {
      if (COMMAND_SETTINGS.some((name) => event.affectsConfiguration(name))) {
        await stop();
        await start(context);
      }
    }),
    vscode.commands.registerCommand("mmalint.restart", async () => {
      await stop();
      await start(context);
    }),
  );
  await start(context);
}

export function deactivate(): Promise<void> {
  return stop();
}
