import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');
export const CLI = path.join(ROOT, 'apps/server/dist/cli/main.js');
/**
 * The Node.js that runs the built server and CLI: this one, or the one `PLACARD_TEST_NODE` names
 * (`scripts/node24.mjs` runs the end-to-end tests again under Node 24 this way).
 */
export const SERVER_NODE = process.env['PLACARD_TEST_NODE'] ?? process.execPath;

/** Builds the server if its sources changed, so end-to-end tests always run the current code. */
export function ensureBuilt(): void {
  const result = spawnSync(process.execPath, [path.join(ROOT, 'scripts/setup.mjs')], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  if (result.status !== 0) throw new Error(`setup failed:\n${result.stdout}\n${result.stderr}`);
}

/**
 * How long one `placard` command may run, and a server process may take to start listening. A
 * command takes a second or two and a start a few on an idle machine, but ten times that on a
 * loaded one; the start window stays under Vitest's test and hook timeouts (vitest.config.ts), so
 * a server that misses it is killed and reported here rather than left running behind a timed-out
 * test or hook.
 */
const CLI_TIMEOUT_MS = 60_000;
export const START_WINDOW_MS = 100_000;

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  /** Why it did not exit by itself: it was killed on `CLI_TIMEOUT_MS`, or could not start. */
  error?: string;
}

/** Runs the built `placard` command to completion (killed if it runs past `CLI_TIMEOUT_MS`). */
export function runCli(args: string[], env: Record<string, string>): CliResult {
  const result = spawnSync(SERVER_NODE, [CLI, ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, ...env },
    timeout: CLI_TIMEOUT_MS,
    killSignal: 'SIGKILL',
  });
  return {
    code: result.status,
    stdout: result.stdout,
    stderr: result.stderr,
    ...(result.error && { error: `${result.error.message} (pid ${result.pid}, killed: ${result.signal})` }),
  };
}

/** Runs `placard … --json` and parses its output, failing loudly on a non-zero exit. */
export function cliJson<T>(args: string[], env: Record<string, string>): T {
  const result = runCli([...args, '--json'], env);
  if (result.code !== 0) {
    const why = result.error ?? `exited ${result.code}`;
    throw new Error(`placard ${args.join(' ')}: ${why}:\n${result.stdout}${result.stderr}`);
  }
  return JSON.parse(result.stdout) as T;
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // it has exited meanwhile
  }
}

export interface ServerProcess {
  url: string;
  /** The JSON summary `serve --json` printed (url, store, demoApiKey, demoSignIns, adminToken). */
  summary: {
    url: string;
    adminToken: string | null;
    demoApiKey: string | null;
    /** With `--demo`: one ready sign-in per kind of account. */
    demoSignIns?: Array<{ kind: string; email: string; password: string }> | null;
  };
  child: ChildProcess;
  /** Everything the process printed, for assertions about logs. */
  output: string[];
  /** Sends SIGTERM and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * Starts `placard serve --json` on a free port and resolves once it is listening; `nodeArgs` go to
 * Node itself, before the script. A process that has not said it is listening within
 * `startWindowMs` is killed (by its pid, and waited for) and the start fails, naming the pid and
 * everything it printed.
 */
export async function startServerProcess(
  env: Record<string, string>,
  args: string[] = [],
  nodeArgs: string[] = [],
  startWindowMs = START_WINDOW_MS,
): Promise<ServerProcess> {
  // A data folder of its own, removed once it has exited, unless the test gives one (to share it
  // on purpose): the default (`data/` where the server starts) would be shared by every test at once
  // and by the developer's own `npm start`, and the demo's key file in it belongs to whichever start
  // wrote it last.
  const ownDataDir =
    env['PLACARD_DATA_DIR'] === undefined ? fs.mkdtempSync(path.join(os.tmpdir(), 'placard-server-')) : null;
  const child = spawn(SERVER_NODE, [...nodeArgs, CLI, 'serve', '--json', ...args], {
    cwd: ROOT,
    env: {
      ...process.env,
      PLACARD_PORT: '0',
      PLACARD_HOST: '127.0.0.1',
      ...(ownDataDir !== null && { PLACARD_DATA_DIR: ownDataDir }),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      if (ownDataDir !== null) fs.rmSync(ownDataDir, { recursive: true, force: true });
      resolve(code);
    }),
  );
  readline.createInterface({ input: child.stderr }).on('line', (line) => output.push(line));
  let timer: NodeJS.Timeout | undefined;
  const listening = new Promise<ServerProcess['summary']>((resolve, reject) => {
    timer = setTimeout(
      () => reject(new Error(`did not say it was listening within ${startWindowMs / 1000} s`)),
      startWindowMs,
    );
    readline.createInterface({ input: child.stdout }).on('line', (line) => {
      output.push(line);
      try {
        const parsed = JSON.parse(line) as Partial<ServerProcess['summary']>;
        if (parsed.url) resolve(parsed as ServerProcess['summary']);
      } catch {
        // a plain text line
      }
    });
    child.once('error', (error) => reject(new Error(`could not be started: ${error.message}`)));
    void exited.then((code) => reject(new Error(`exited with ${code} before listening`)));
  });
  let summary: ServerProcess['summary'];
  try {
    summary = await listening;
  } catch (error) {
    let killed = '';
    if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
      killQuietly(child.pid);
      await exited;
      killed = '; killed it';
    }
    throw new Error(
      `placard serve (pid ${child.pid}) ${(error as Error).message}${killed}:\n${output.join('\n')}`,
    );
  } finally {
    clearTimeout(timer);
  }
  return {
    url: summary.url,
    summary,
    child,
    output,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null) child.kill(signal);
      return exited;
    },
  };
}

/**
 * The server's own account of its shutdown: the `shut down` line it logs before it exits 0, with
 * how long closing took from the signal (`ms`) and the budget it had (`budgetMs`), both measured by
 * the server; undefined when it logged none.
 */
export function shutdownReport(server: ServerProcess): { ms: number; budgetMs: number } | undefined {
  for (const line of server.output) {
    if (!line.startsWith('{')) continue;
    const record = JSON.parse(line) as { msg?: string; ms?: number; budgetMs?: number };
    if (record.msg === 'shut down') return { ms: record.ms!, budgetMs: record.budgetMs! };
  }
  return undefined;
}

/**
 * `managementClient(url, adminToken)`: the management API of a server started as a process; each
 * call resolves with the answer's `data` and throws, naming the call, on an error status. The
 * traffic simulation (bench/simulate) calls the API the same way, so there is one copy, in
 * `scripts/event-load.mjs`.
 */
export { managementClient } from '../../../../scripts/event-load.mjs';
