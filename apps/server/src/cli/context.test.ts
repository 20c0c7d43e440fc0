import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { storeAction } from './context.js';

describe('storeAction: the --json option and an action in the store', () => {
  let dir: string;
  const saved = process.env['PLACARD_DATA_DIR'];
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placard-cli-context-'));
    process.env['PLACARD_DATA_DIR'] = dir;
  });
  afterEach(() => {
    if (saved === undefined) delete process.env['PLACARD_DATA_DIR'];
    else process.env['PLACARD_DATA_DIR'] = saved;
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('declares --json last and gives the body the open store, the options, then the arguments', async () => {
    const seen: unknown[] = [];
    const program = new Command('placard').exitOverride();
    storeAction(
      program.command('rename <id> <name>').option('--note <text>', 'a note'),
      async ({ store, config }, options: { json?: boolean; note?: string }, ...args) => {
        seen.push(store.engine, config.dataDir, options, args);
      },
      { create: true },
    );
    await program.parseAsync(['rename', '7', 'seven', '--note', 'hi', '--json'], { from: 'user' });
    expect(program.commands[0].options.map((option) => option.long)).toEqual(['--note', '--json']);
    expect(seen).toEqual(['sqlite', dir, { note: 'hi', json: true }, ['7', 'seven']]);
  });
});
