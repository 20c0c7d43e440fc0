import fs from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { PAGE } from './support.js';

/** `apps/server/public`, from `src/http/dashboard` and from `dist/http/dashboard` alike. */
const PUBLIC_DIR = new URL('../../../public/', import.meta.url);

const TYPES: Record<string, string> = {
  css: 'text/css; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
};

/**
 * The dashboard's stylesheet and scripts, read once at start and served from memory with a
 * revalidating cache. A handful of small files does not need @fastify/static's range and
 * directory handling, and nothing comes from another origin (D14).
 */
export async function assetRoutes(app: FastifyInstance): Promise<void> {
  for (const name of fs.readdirSync(PUBLIC_DIR)) {
    const type = TYPES[name.split('.').pop() ?? ''];
    if (!type) continue;
    const body = fs.readFileSync(new URL(name, PUBLIC_DIR));
    app.get(`/assets/${name}`, PAGE, async (_request, reply) =>
      reply.header('content-type', type).header('cache-control', 'no-cache').send(body),
    );
  }
}
