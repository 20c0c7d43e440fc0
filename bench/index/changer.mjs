// One change a second to the store the server under test reads, made through another connection as
// the CLI or another instance would: `bench/index/run.mjs` starts it beside wrk and stops it with
// SIGTERM. Mode `in-place` cycles through a pause, a resume and a daily cap's hold (3 s) of the
// given campaigns, which the server applies to its index in place; mode `rebuild` rewrites a
// placement's description, a change the campaign log cannot name, so the server rebuilds its whole
// index for each one as it did for every change before the index changed in place.
//
// It says `{"ready":true}` once its store has answered, and `run.mjs` starts the measured window only
// then: loading the store's modules takes a few hundred milliseconds, longer on the busy load core,
// so with a short window (BENCH_SECONDS=1) the SIGTERM used to arrive before the handler below
// existed, the changer died without a word and `run.mjs` failed parsing its empty output.
import { connect } from '../../apps/server/dist/store/connect.js';
import { Store } from '../../apps/server/dist/store/store.js';

let count = 0;
let timer;
// Reports at once and exits: a change in flight is abandoned rather than waited for.
process.once('SIGTERM', () => {
  clearInterval(timer);
  console.log(JSON.stringify({ changes: count }));
  process.exit(0);
});
const [databaseUrl, mode, ...ids] = process.argv.slice(2);
const campaignIds = ids.map(Number);
const store = new Store(connect(databaseUrl));
const steps = [
  (id, now) => store.moveCampaignStatus(id, 'running', 'paused', now),
  (id, now) => store.moveCampaignStatus(id, 'paused', 'running', now),
  (id, now) => store.updateCampaign(id, { cappedUntil: now + 3000 }, now),
];
let busy = false;
function changeOne() {
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
}
// The store is open once it has answered; the first change is made then, with the window's start.
await store.getMeta('schema_version');
console.log(JSON.stringify({ ready: true }));
changeOne();
timer = setInterval(changeOne, 1000);
