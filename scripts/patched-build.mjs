// A copy of the server's build with some lines replaced, for tests and benchmarks that must run
// the product with one part changed (the crash test's deliberately broken batcher, the
// benchmarks' build without rate limiting and browser check). The real build is never touched.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Copies apps/server/dist to apps/server/.<name>-dist and applies `patches` ({ file, from, to },
 * file relative to dist); throws if a `from` text is not found, so a refactor cannot silently turn
 * the patch into a no-op. Returns the copy's directory.
 */
export function patchedBuild(name, patches) {
  const dist = path.join(root, 'apps/server/dist');
  const copy = path.join(root, `apps/server/.${name}-dist`);
  fs.rmSync(copy, { recursive: true, force: true });
  fs.cpSync(dist, copy, { recursive: true });
  for (const { file, from, to } of patches) {
    const target = path.join(copy, file);
    const source = fs.readFileSync(target, 'utf8');
    if (!source.includes(from)) throw new Error(`cannot find the text to patch in ${file}: ${from}`);
    fs.writeFileSync(target, source.replace(from, to));
  }
  return copy;
}
