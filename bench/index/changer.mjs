// One change a second to the store the server under test reads, made through another connection as
// the CLI or another instance would: `bench/index/run.mjs` starts it beside wrk and stops it with
// SIGTERM. Mode `in-place` cycles through a pause, a resume and a daily cap's hold (3 s) of the
// given campaigns, which the server applies to its index in place; mode `rebuild` rewrites a
// placement's description, a change the campaign log cannot name, so the server rebuilds its whole
// index for each one as it did for every change before the index changed in place.
import { connect } from '../../apps/server/dist/store/connect.js';
import { Store } from '../../apps/server/dist/store/store.js';

const [databaseUrl, mode, ...ids] = process.argv.slice(2);
const campaignIds = ids.map(Number);
const store = new Store(connect(databaseUrl));
const steps = [
  (id, now) => store.moveCampaignStatus(id, 'running', 'paused', now),
  (id, now) => store.moveCampaignStatus(id, 'paused', 'running', now),
  (id, now) => store.updateCampaign(id, { cappedUntil: now + 3000 }, now),
];
let count = 0;
let busy = false;
const timer = setInterval(() => {
  // One change at a time: a change still waiting on the store skips this tick.
  if (busy) return;
  busy = true;
  const now = Date.now();
  const id = campaignIds[Math.floor(count / steps.length) % campaignIds.length];
  const change =
    mode === 'rebuild'
      ? store.updatePlacement('interstitial', { description: `between two page views (${count})` })
      : steps[count % steps.length](id, now);
  change.then(
    () => {
      count++;
      busy = false;
    },
    (error) => {
      console.error(`changer: ${error.message}`);
      busy = false;
    },
  );
}, 1000);
// Reports at once and exits: a change in flight is abandoned rather than waited for.
process.once('SIGTERM', () => {
  clearInterval(timer);
  console.log(JSON.stringify({ changes: count }));
  process.exit(0);
});
