import { PlacardClient } from '@placard/client';
import { createSite } from './site.js';

/**
 * `npm start -w examples/partner-site` with PLACARD_URL and PLACARD_API_KEY set (the key from
 * `placard keys create`, kept in the environment, never in the page). PORT defaults to 3000.
 */
const apiKey = process.env['PLACARD_API_KEY'];
const baseUrl = process.env['PLACARD_URL'] ?? 'http://127.0.0.1:8080';
if (!apiKey) {
  console.error('Set PLACARD_API_KEY to a partner key (placard keys create --partner <name>).');
  process.exit(1);
}
const port = Number(process.env['PORT'] ?? 3000);
const site = createSite({ client: new PlacardClient({ apiKey, baseUrl }) });
site.listen(port, '127.0.0.1', () => {
  const address = site.address();
  const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : port}`;
  // One JSON line, for scripts and tests; people read the second.
  console.log(JSON.stringify({ url }));
  console.log(`partner site on ${url} (Placard at ${baseUrl})`);
});
for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.once(signal, () => site.close(() => process.exit(0)));
