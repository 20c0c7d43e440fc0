// `npm run openapi`: writes the OpenAPI document the server generates from its route schemas to
// docs/openapi.json (a test fails while the committed copy is stale), then lints it with Redocly.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureBuilt, ensureInstalled } from './setup.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const DOCUMENT = path.join(root, 'docs/openapi.json');

/** The document as text: what /openapi.json serves, two-space indented. */
export async function generate() {
  const { loadConfig } = await import(path.join(root, 'apps/server/dist/config.js'));
  const { startServer } = await import(path.join(root, 'apps/server/dist/server.js'));
  const pino = (await import('pino')).default;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'placard-openapi-'));
  const config = loadConfig({ PLACARD_DATA_DIR: dataDir, PLACARD_PORT: '0' });
  const server = await startServer(config, { logger: pino({ level: 'warn' }) });
  try {
    return `${JSON.stringify(server.app.swagger(), null, 2)}\n`;
  } finally {
    await server.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  ensureInstalled();
  ensureBuilt();
  fs.writeFileSync(DOCUMENT, await generate());
  console.log(`openapi: wrote ${path.relative(root, DOCUMENT)}`);
  const lint = spawnSync('npx', ['redocly', 'lint', DOCUMENT], { cwd: root, stdio: 'inherit' });
  process.exit(lint.status ?? 1);
}
