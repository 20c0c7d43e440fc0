import { PlacardError } from './errors.js';

export const BROWSER_MESSAGE =
  '@placard/client runs on servers only: an API key in a browser is readable by every visitor ' +
  '(partner API section 1.5). Call Placard from your server and send the page only what it renders.';

/**
 * Refuses to run where a page or a web worker runs: there the key would be shipped to users. Deno,
 * Bun and Node have neither `document` nor a worker scope.
 */
export function assertServerSide(scope: object = globalThis): void {
  const global = scope as { document?: unknown; WorkerGlobalScope?: abstract new () => unknown };
  const inWorker =
    typeof global.WorkerGlobalScope === 'function' && scope instanceof global.WorkerGlobalScope;
  if (global.document !== undefined || inWorker) throw new PlacardError(BROWSER_MESSAGE);
}
