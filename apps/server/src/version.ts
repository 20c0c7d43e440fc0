import { createRequire } from 'node:module';

/** The product's version, from apps/server/package.json (one level up from both src/ and dist/). */
export const VERSION: string = (createRequire(import.meta.url)('../package.json') as { version: string })
  .version;
