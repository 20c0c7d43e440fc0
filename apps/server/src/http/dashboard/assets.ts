import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { gzipSync } from 'node:zlib';
import type { FastifyInstance } from 'fastify';
import { PAGE } from './support.js';

/**
 * `apps/server/public` (written by hand) and `apps/server/dist/public` (the browser scripts
 * bundled by `browser/build.mjs`), from `src/http/dashboard` and from `dist/http/dashboard` alike.
 */
const ASSET_DIRS = [
  new URL('../../../public/', import.meta.url),
  new URL('../../../dist/public/', import.meta.url),
];

const TYPES: Record<string, string> = {
  css: 'text/css; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
};

/**
 * The dashboard's stylesheets and scripts, read and gzipped once at start and served from memory,
 * revalidated by ETag. A handful of files does not need @fastify/static's range and directory
 * handling, and nothing comes from another origin (D14). Where the bundle has not been built (an
 * in-process test), its files are simply absent.
 */
export async function assetRoutes(app: FastifyInstance): Promise<void> {
  for (const dir of ASSET_DIRS) {
    if (!fs.existsSync(dir)) continue;
    for (const name of fs.readdirSync(dir)) {
      const type = TYPES[name.split('.').pop() ?? ''];
      if (!type) continue;
      const body = fs.readFileSync(new URL(name, dir));
      const gzipped = gzipSync(body, { level: 9 });
      const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 16)}"`;
      app.get(`/assets/${name}`, PAGE, async (request, reply) => {
        void reply.header('content-type', type).header('cache-control', 'no-cache').header('etag', etag);
        void reply.header('vary', 'accept-encoding');
        if (request.headers['if-none-match'] === etag) return reply.code(304).send();
        if (/\bgzip\b/.test(request.headers['accept-encoding'] ?? ''))
          return reply.header('content-encoding', 'gzip').send(gzipped);
        return reply.send(body);
      });
    }
  }
}
