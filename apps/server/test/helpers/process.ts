import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
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

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the built `placard` command to completion. */
export function runCli(args: string[], env: Record<string, string>): CliResult {
  const result = spawnSync(SERVER_NODE, [CLI, ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, ...env },
    timeout: 30_000,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** Runs `placard … --json` and parses its output, failing loudly on a non-zero exit. */
export function cliJson<T>(args: string[], env: Record<string, string>): T {
  const result = runCli([...args, '--json'], env);
  if (result.code !== 0)
    throw new Error(`placard ${args.join(' ')} exited ${result.code}:\n${result.stdout}${result.stderr}`);
  return JSON.parse(result.stdout) as T;
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
 * Node itself, before the script.
 */
export async function startServerProcess(
  env: Record<string, string>,
  args: string[] = [],
  nodeArgs: string[] = [],
): Promise<ServerProcess> {
  const child = spawn(SERVER_NODE, [...nodeArgs, CLI, 'serve', '--json', ...args], {
    cwd: ROOT,
    env: { ...process.env, PLACARD_PORT: '0', PLACARD_HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  readline.createInterface({ input: child.stderr }).on('line', (line) => output.push(line));
  const summary = await new Promise<ServerProcess['summary']>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${output.join('\n')}`)), 20_000);
    readline.createInterface({ input: child.stdout }).on('line', (line) => {
      output.push(line);
      try {
        const parsed = JSON.parse(line) as Partial<ServerProcess['summary']>;
        if (parsed.url) {
          clearTimeout(timer);
          resolve(parsed as ServerProcess['summary']);
        }
      } catch {
        // a plain text line
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code} before listening:\n${output.join('\n')}`));
    });
  });
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
 * The management API of a server started as a process, with `adminToken`: each call resolves with
 * the answer's `data` and throws, naming the call, on an error status.
 */
export function managementClient(url: string, adminToken: string) {
  return async <T = Record<string, unknown> & { id: number }>(
    method: string,
    path: string,
    body?: unknown,
  ): Promise<T> => {
    const answer = await fetch(`${url}/admin/v1${path}`, {
      method,
      headers: {
        authorization: `Bearer ${adminToken}`,
        ...(body !== undefined && { 'content-type': 'application/json' }),
      },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    const json = (await answer.json()) as { data: T; message?: string };
    if (answer.status >= 400) throw new Error(`${method} ${path}: ${answer.status} ${json.message}`);
    return json.data;
  };
}
