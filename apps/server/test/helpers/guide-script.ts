import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from './process.js';

/** The `sh` blocks of a guide, in order: what a reader types. */
export function shellBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^```sh\n([\s\S]*?)^```/gm)].map((match) => match[1]);
}

/** The `text` blocks of a guide, in order: what the reader is told the commands print. */
export function textBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^```text\n([\s\S]*?)^```/gm)].map((match) => match[1]);
}

export interface GuideRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * A guide followed literally: every `sh` block of `guide` (a path from the repository's root), in
 * order, in one bash with `set -Eeuo pipefail`, from the repository's root, as the guides say. The
 * only change is the port (a free one instead of 8080, which another program may hold). A guide
 * starts its own server in the background, so the shell runs in a process group of its own, which
 * `stop` ends; the guide's data directory is removed then too. Variables a developer may have set
 * for their own server are cleared, so the guide's own settings are the ones used.
 */
export function guideRunner(guide: string, dataDir: string) {
  let group: number | undefined;
  return {
    dataDir: path.join(ROOT, dataDir),
    markdown: () => fs.readFileSync(path.join(ROOT, guide), 'utf8'),
    async run(port: number): Promise<GuideRun> {
      // The trap names the command that failed on stderr, which a silent failure (a command whose
      // output the guide sends to /dev/null) would otherwise leave unsaid.
      const trap = `trap 'echo "guide: line $LINENO: $BASH_COMMAND exited $?" >&2' ERR`;
      const script = ['set -Eeuo pipefail', trap, ...shellBlocks(this.markdown())]
        .join('\n')
        .replaceAll('127.0.0.1:8080', `127.0.0.1:${port}`);
      const child = spawn('bash', ['-c', script], {
        cwd: ROOT,
        detached: true,
        env: { ...process.env, PLACARD_PORT: String(port), PLACARD_ADMIN_TOKEN: '', PLACARD_DATA_DIR: '' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      group = child.pid;
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
      return { code, stdout, stderr };
    },
    stop(): void {
      if (group !== undefined) {
        try {
          process.kill(-group, 'SIGTERM');
        } catch {
          // already gone
        }
      }
      fs.rmSync(this.dataDir, { recursive: true, force: true });
    },
  };
}
