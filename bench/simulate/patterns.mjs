// The traffic patterns of `npm run simulate` (run.mjs): what each simulated partner's server does
// through the partner API, for a bounded time. Each pattern counts what it sent and, of that, what
// the rules of D15 say must not be billed (`unbillable`), so run.mjs can hold the server's verdicts
// (read back from its reports) against them. Nothing here judges: the server does.
import { randomUUID } from 'node:crypto';
import { PlacardClient } from '@placard/client';

/** Placements the honest background shares with the keys that must be flagged against its baseline. */
export const SHARED_PLACEMENTS = ['header_banner', 'article_inline', 'sidebar_top'];
/**
 * Placements of the poisoned baseline: a key polling impressions, two honest partners at 1% and an
 * honest key at 3%, on their own so that the rest of the run does not hide what the loop does there.
 */
export const POISONED_PLACEMENTS = ['article_top', 'article_bottom'];
/** Placements of the patterns judged event by event (their clicks would skew the shared baseline). */
export const OTHER_PLACEMENTS = ['feed_sponsored', 'footer_banner'];

/** End users' browsers: none is a bot by the `isbot` list. */
export const BROWSERS = [
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10.15; rv:132.0) Gecko/20100101 Firefox/132.0',
  'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36',
];

/** Crawlers and scripts a partner's pages are requested by, forwarded as they came. */
export const BOTS = [
  'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
  'Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)',
  'Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)',
  'Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)',
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/120.0.0.0 Safari/537.36',
  'facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)',
  'curl/8.5.0',
  'python-requests/2.31.0',
  'Go-http-client/1.1',
  'Wget/1.21.4',
];

const LOCATIONS = ['US', 'GB', 'DE', 'FR', 'CA'];
const DEVICES = ['mobile', 'desktop', 'tablet'];
/** Honest displays clicked: about 1%, 1 to 20 seconds after the impression. */
const HONEST_CTR = 0.01;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const pick = (rng, list) => list[Math.floor(rng() * list.length)];
const between = (rng, low, high) => low + rng() * (high - low);

/**
 * An end user: a browser (or a bot), an address in 198.18.0.0/15 (set aside for benchmarks, RFC
 * 2544; bots in its second half) drawn from 65,536, a country and a device.
 */
function endUser(rng, { bot = false } = {}) {
  const n = Math.floor(rng() * 65_536);
  return {
    userAgent: pick(rng, bot ? BOTS : BROWSERS),
    userIp: `198.${bot ? 19 : 18}.${n >> 8}.${n & 255}`,
    location: pick(rng, LOCATIONS),
    device: pick(rng, DEVICES),
  };
}

/**
 * An end user behind a click farm's block of addresses (TEST-NET-3, 203.0.113.0/24, RFC 5737): a
 * browser, one of 254 addresses of one /24, as a farm's machines or phones behind one line are.
 */
function farmUser(rng) {
  return { ...endUser(rng), userIp: `203.0.113.${1 + Math.floor(rng() * 254)}` };
}

/**
 * An end user of a mobile carrier whose customers share a NAT block (100.64.1.0/24, in the
 * shared address space of RFC 6598 that carriers use for exactly that): many people, one /24.
 */
function carrierUser(rng) {
  return { ...endUser(rng), userIp: `100.64.1.${1 + Math.floor(rng() * 254)}` };
}

/** What one pattern sent, by kind, and how much of it the rules say must not be billed. */
export function newTally() {
  return {
    sent: { impressions: 0, clicks: 0 },
    unbillable: { impressions: 0, clicks: 0 },
    /** Events held back by an outage of the partner's forwarder and sent later, with their `occurredAt`. */
    late: 0,
    fetches: 0,
    /** Requests not answered 200 (or SDK calls that threw), by status or error. */
    failed: {},
    /**
     * Requests answered `403 api key suspended` once the key was suspended (the policy of run.mjs
     * suspends a key whose click-through rate is far off), fetches and events apart: what the
     * server must do, not a failure. Only refused events were counted in `sent`.
     */
    refusedSuspended: { fetches: 0, events: 0 },
  };
}

const plural = { impression: 'impressions', click: 'clicks' };

/**
 * The partner API as a partner's server calls it directly: fetches (cached for the answer's
 * `max-age` unless `cache` is false), impressions and clicks with an Idempotency-Key each.
 */
function partnerApi(ctx) {
  const headers = { authorization: `Bearer ${ctx.apiKey}` };
  const cache = new Map();
  const fail = (what) => {
    if (/ 403$/.test(what)) ctx.tally.refusedSuspended[what.startsWith('fetch') ? 'fetches' : 'events']++;
    else ctx.tally.failed[what] = (ctx.tally.failed[what] ?? 0) + 1;
  };

  async function fetchCampaigns(query, { cache: useCache = true } = {}) {
    const search = new URLSearchParams(query).toString();
    const cached = cache.get(search);
    if (useCache && cached && cached.until > Date.now()) return cached.campaigns;
    const pending = (async () => {
      ctx.tally.fetches++;
      const answer = await fetch(`${ctx.url}/api/v1/campaigns/fetch?${search}`, { headers });
      const body = await answer.json();
      if (answer.status !== 200) {
        fail(`fetch ${answer.status}`);
        return [];
      }
      const maxAge = Number(/max-age=(\d+)/.exec(answer.headers.get('cache-control') ?? '')?.[1] ?? 0);
      if (useCache) cache.set(search, { until: Date.now() + maxAge * 1000, campaigns: body.data });
      return body.data;
    })();
    // Identical fetches in flight share one request, as a partner's cache does.
    if (useCache) cache.set(search, { until: Infinity, campaigns: pending });
    try {
      return await pending;
    } catch (error) {
      cache.delete(search);
      throw error;
    }
  }

  /** Reports one event; `unbillable`: the rules say it must not be billed. Resolves true on 200. */
  async function track(kind, body, { unbillable = false } = {}) {
    ctx.tally.sent[plural[kind]]++;
    if (unbillable) ctx.tally.unbillable[plural[kind]]++;
    try {
      const answer = await fetch(`${ctx.url}/api/v1/campaigns/${kind}`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
        body: JSON.stringify(body),
      });
      await answer.arrayBuffer();
      if (answer.status === 200) return true;
      fail(`${kind} ${answer.status}`);
    } catch (error) {
      fail(`${kind} ${error.cause?.code ?? error.message}`);
    }
    return false;
  }

  return { fetchCampaigns, track, fail };
}

/**
 * Starts `visit()` `perSecond` times a second, evenly, until the deadline, then waits for the
 * visits under way (a few seconds at most: an honest click due after the deadline is not sent, see
 * `later`).
 */
async function paced(ctx, perSecond, visit) {
  const running = new Set();
  const start = Date.now();
  let started = 0;
  while (Date.now() < ctx.deadline) {
    const due = Math.floor(((Date.now() - start) / 1000) * perSecond);
    for (; started < due; started++) {
      const run = visit(started).catch((error) => {
        ctx.tally.failed[`error ${error.name}`] = (ctx.tally.failed[`error ${error.name}`] ?? 0) + 1;
        ctx.errors.push(String(error.stack ?? error));
      });
      running.add(run);
      void run.finally(() => running.delete(run));
    }
    await sleep(10);
  }
  await Promise.all(running);
}

/**
 * Runs `action` after `ms`, unless that is past the deadline: a display clicked after the run's
 * end is not clicked within it (so an honest pattern's CTR ends a little under 1%).
 */
async function later(ctx, ms, action) {
  if (Date.now() + ms >= ctx.deadline) return;
  await sleep(ms);
  await action();
}

/**
 * A fetch for one display to `user` on a random placement of the pattern's: the event body to report
 * for the campaign served (with the end user's signals, and with `tokens` its serve token), or null
 * when none was. A fetch with tokens is never answered from the cache: a token is for one page view.
 */
async function displayFor(ctx, api, user, { tokens = false } = {}) {
  const placement = pick(ctx.rng, ctx.placements);
  const query = { placement, location: user.location, device: user.device, limit: '1' };
  const [campaign] = tokens
    ? await api.fetchCampaigns({ ...query, tokens: 'true' }, { cache: false })
    : await api.fetchCampaigns(query);
  if (!campaign) return null;
  const body = { campaignId: campaign.id, placement, ...user };
  if (!tokens) return body;
  if (!campaign.token) {
    api.fail('fetch without a token');
    return null;
  }
  return { ...body, token: campaign.token };
}

/**
 * A click on `body`'s display `after` ([min, max] ms) from now and, for `share` of them, a second
 * one `again` after the first: a double click, which the rules do not bill. The partner forwards
 * each click as it comes, without waiting for the answer to the first: the gap Placard sees is the
 * user's, not the user's plus the first click's commit (which, on a busy machine, took the second
 * past the double-click window).
 */
async function clickTwice(ctx, api, body, { after, again, share = 1 }) {
  await sleep(between(ctx.rng, ...after));
  const first = api.track('click', body);
  if (share < 1 && ctx.rng() >= share) return void (await first);
  await sleep(between(ctx.rng, ...again));
  await Promise.all([first, api.track('click', body, { unbillable: true })]);
}

/**
 * A partner following the contract without tokens: fetches for a slot, reusing the answer for its
 * `max-age` per placement, country and device; one impression per display, with the end user's
 * `userAgent` and `userIp` (`user` draws them); `ctr` of displays clicked 1 to 20 seconds later.
 * `unbillable`: the rules must bill none of its events (its users are not people).
 */
function followsContract(ctx, { perSecond, ctr, user: drawUser = endUser, unbillable = false }) {
  const api = partnerApi(ctx);
  return paced(ctx, perSecond, async () => {
    const user = drawUser(ctx.rng);
    const body = await displayFor(ctx, api, user);
    if (!body) return;
    if (!(await api.track('impression', body, { unbillable }))) return;
    if (ctx.rng() < ctr)
      await later(ctx, between(ctx.rng, 1_000, 20_000), () => api.track('click', body, { unbillable }));
  });
}

/**
 * A partner following the contract through `@placard/client` with `tokens: true`: a fetch per page
 * view, the token sent with its impression and, for `ctr` of displays, its click 1 to 20 seconds later.
 */
function throughSdk(ctx, { perSecond, ctr, apiKey = ctx.apiKey }) {
  const client = new PlacardClient({ apiKey, baseUrl: ctx.url, tokens: true });
  const fail = (error, refused = 'events') => {
    if (error.status === 403) return void ctx.tally.refusedSuspended[refused]++;
    const what = `sdk ${error.name}${error.status ? ` ${error.status}` : ''}`;
    ctx.tally.failed[what] = (ctx.tally.failed[what] ?? 0) + 1;
  };
  return paced(ctx, perSecond, async () => {
    const user = endUser(ctx.rng);
    const placement = pick(ctx.rng, ctx.placements);
    ctx.tally.fetches++;
    let campaign;
    try {
      [campaign] = await client.fetchCampaigns({
        placement,
        location: user.location,
        device: user.device,
        limit: 1,
      });
    } catch (error) {
      return fail(error, 'fetches');
    }
    if (!campaign) return;
    const display = client.display(campaign, placement, user);
    ctx.tally.sent.impressions++;
    try {
      await display.impression();
    } catch (error) {
      return fail(error);
    }
    if (ctx.rng() < ctr)
      await later(ctx, between(ctx.rng, 1_000, 20_000), async () => {
        ctx.tally.sent.clicks++;
        await display.click().catch(fail);
      });
  });
}

/**
 * A partner's event forwarder that stops `fromMs` after it starts, for `forMs` (cut short at the
 * run's deadline), holding every event meanwhile, then sends its backlog in the order the events
 * happened, 8 requests at a time, a click only once its impression was answered; events that
 * happen while the backlog drains queue behind it. Every event carries its `occurredAt`, the time
 * it happened. `send` resolves true once the event was answered 200.
 */
function outageForwarder(ctx, api, { fromMs, forMs }) {
  const start = Date.now();
  const down = start + fromMs;
  const up = Math.min(down + forMs, ctx.deadline);
  const backlog = [];
  let draining = false;
  async function drain() {
    if (draining) return;
    draining = true;
    const inFlight = new Set();
    while (backlog.length > 0) {
      const { kind, event, after, resolve } = backlog.shift();
      const run = (async () =>
        resolve((after === undefined || (await after)) && (await api.track(kind, event))))();
      inFlight.add(run);
      void run.finally(() => inFlight.delete(run));
      if (inFlight.size >= 8) await Promise.race(inFlight);
    }
    await Promise.all(inFlight);
    draining = false;
    // Events queued while the last requests were answered.
    if (backlog.length > 0) void drain();
  }
  const timer = setTimeout(() => void drain(), Math.max(0, up - Date.now()));
  return {
    /** `after`: the answer to this display's impression, which a click waits for. */
    send(kind, body, after) {
      const event = { ...body, occurredAt: new Date().toISOString() };
      const now = Date.now();
      if ((now < down || now >= up) && backlog.length === 0 && !draining)
        return after === undefined
          ? api.track(kind, event)
          : after.then((ok) => ok && api.track(kind, event));
      if (now < up) ctx.tally.late++;
      return new Promise((resolve) => {
        backlog.push({ kind, event, after, resolve });
        if (now >= up) void drain();
      });
    },
    stop: () => clearTimeout(timer),
  };
}

/**
 * A partner following the contract (as `followsContract`) whose forwarder has an outage: its page
 * views go on (fetches are its page server's), their impressions and clicks are held and sent late
 * with the times they happened (`outageForwarder`).
 */
async function catchesUp(ctx, { perSecond, ctr, outage }) {
  const api = partnerApi(ctx);
  const forwarder = outageForwarder(ctx, api, outage);
  try {
    await paced(ctx, perSecond, async () => {
      const user = endUser(ctx.rng);
      const body = await displayFor(ctx, api, user);
      if (!body) return;
      const shown = forwarder.send('impression', body);
      if (ctx.rng() < ctr)
        await later(ctx, between(ctx.rng, 1_000, 20_000), () => forwarder.send('click', body, shown));
      await shown;
    });
  } finally {
    forwarder.stop();
  }
}

/** The outage of `catch-up after an outage`: 15 s in, 3 minutes, or in a shorter run all but its last 40 s. */
export function outageOf(seconds) {
  return { fromMs: 15_000, forMs: Math.min(180_000, Math.max(10_000, (seconds - 55) * 1000)) };
}

/**
 * The patterns of the click-through baseline (D15, key flags): a key that poisons its placements'
 * baseline, and fraud spread over one partner's keys. `keys`: how many keys its partner gets
 * (ctx.apiKeys); `suspended`: what the check expects of its keys' status at the end.
 */
const BASELINE_PATTERNS = [
  {
    name: 'poisoned baseline: polling key',
    description:
      'fetches and reports the impression of the campaign it gets 60 times a second, never clicked: pulls its placements’ pooled rate towards 0',
    placements: POISONED_PLACEMENTS,
    expect: 'flagged and suspended',
    run(ctx) {
      const api = partnerApi(ctx);
      return paced(ctx, 60, async () => {
        const placement = pick(ctx.rng, ctx.placements);
        const [campaign] = await api.fetchCampaigns({ placement, limit: '1' }, { cache: false });
        if (campaign) await api.track('impression', { campaignId: campaign.id, placement });
      });
    },
  },
  ...[1, 2].map((n) => ({
    name: `poisoned baseline: honest background ${n}`,
    description: `follows the contract on the polling key's placements, 15 page views a second, ${2 * HONEST_CTR * 100}% clicked (these placements are clicked more than the shared ones)`,
    placements: POISONED_PLACEMENTS,
    expect: 'honest',
    run: (ctx) => followsContract(ctx, { perSecond: 15, ctr: 2 * HONEST_CTR }),
  })),
  {
    name: 'poisoned baseline: honest at 3%',
    description:
      'through @placard/client with tokens on the polling key’s placements, 5 page views a second, 3% clicked: 1.5× the honest background there, far above a rate the polling key pulled down',
    placements: POISONED_PLACEMENTS,
    expect: 'honest',
    run: (ctx) => throughSdk(ctx, { perSecond: 5, ctr: 3 * HONEST_CTR }),
  },
  {
    name: 'distributed keys',
    description:
      'one partner, 5 keys, each following the contract at 4 page views a second with 4% clicked: 4× the baseline, under the key threshold of 5×',
    placements: SHARED_PLACEMENTS,
    keys: 5,
    expect: 'flagged within 5 minutes',
    run: (ctx) =>
      Promise.all(
        ctx.apiKeys.map((apiKey) =>
          followsContract({ ...ctx, apiKey }, { perSecond: 4, ctr: 4 * HONEST_CTR }),
        ),
      ),
  },
];

/**
 * Each pattern: its name (the test finds it by that), a description, the placements it uses, and
 * `run(ctx)` with ctx = { url, apiKey, apiKeys, placements, rng, seconds, deadline, tally, errors };
 * `partners` (how many partners it is, default 1) and `keys` (each partner's, default 1); `signal`,
 * the flag it must get, when it names one. `expect` says what D15 requires of it (run.mjs prints
 * whether it holds; the test asserts it).
 */
export const PATTERNS = [
  {
    name: 'honest',
    description: `follows the contract without tokens: fetch cached for max-age, one impression per display, ${HONEST_CTR * 100}% clicked 1-20 s later`,
    placements: SHARED_PLACEMENTS,
    expect: 'honest',
    run: (ctx) => followsContract(ctx, { perSecond: 100, ctr: HONEST_CTR }),
  },
  {
    name: 'honest with tokens (SDK)',
    description: `the same through @placard/client with tokens: true: a fetch per page view, the token sent with its impression and click`,
    placements: SHARED_PLACEMENTS,
    expect: 'honest',
    run: (ctx) => throughSdk(ctx, { perSecond: 40, ctr: HONEST_CTR }),
  },
  {
    name: '20x click-through',
    description: `follows the contract, but 20% of its displays are clicked: 20 times its placements' baseline of about 1%`,
    placements: SHARED_PLACEMENTS,
    expect: 'flagged',
    run: (ctx) => followsContract(ctx, { perSecond: 3, ctr: 20 * HONEST_CTR }),
  },
  {
    name: 'impression polling loop',
    description:
      'each of 40 open pages reports the impression of its one fetched campaign every 0.5 s, from its first event (80 a second, no clicks)',
    placements: SHARED_PLACEMENTS,
    expect: 'flagged',
    async run(ctx) {
      const api = partnerApi(ctx);
      const pages = Array.from({ length: 40 }, async (_, page) => {
        const placement = ctx.placements[page % ctx.placements.length];
        const [campaign] = await api.fetchCampaigns({ placement, limit: '1' });
        if (!campaign) return;
        const start = Date.now() + between(ctx.rng, 0, 500);
        for (let k = 0; start + k * 500 < ctx.deadline; k++) {
          const wait = start + k * 500 - Date.now();
          if (wait > 0) await sleep(wait);
          await api.track('impression', { campaignId: campaign.id, placement });
        }
      });
      await Promise.all(pages);
    },
  },
  {
    name: 'click flood',
    description:
      'one key clicks the campaigns it fetched 40 times a second, never reporting an impression (no end-user signals)',
    placements: SHARED_PLACEMENTS,
    expect: 'flagged',
    run(ctx) {
      const api = partnerApi(ctx);
      return paced(ctx, 40, async () => {
        const placement = pick(ctx.rng, ctx.placements);
        const campaigns = await api.fetchCampaigns({ placement, limit: '10' });
        if (campaigns.length === 0) return;
        await api.track(
          'click',
          { campaignId: pick(ctx.rng, campaigns).id, placement },
          { unbillable: true },
        );
      });
    },
  },
  {
    name: 'bot user agents',
    description:
      'follows the contract for page views requested by crawlers and scripts, forwarding their user agents (5% of displays clicked)',
    placements: SHARED_PLACEMENTS,
    expect: 'not billed',
    run: (ctx) =>
      followsContract(ctx, {
        perSecond: 10,
        ctr: 0.05,
        user: (rng) => endUser(rng, { bot: true }),
        unbillable: true,
      }),
  },
  {
    name: 'clicks without impressions',
    description:
      'no tokens; per campaign and placement, one after the other: 60% clicks with no impression, 40% an impression, its click 1-3 s later and a second click (double click) 0.1-0.25 s after that',
    placements: OTHER_PLACEMENTS,
    expect: 'unpaired clicks not billed',
    async run(ctx) {
      const api = partnerApi(ctx);
      // One worker per campaign and placement, sending one event at a time, so that what the key
      // has unclicked of each pair is known exactly: none before each click without impression and
      // before each second click, one before each first click.
      const pairs = [];
      for (const placement of ctx.placements) {
        for (const campaign of await api.fetchCampaigns({ placement, limit: '10' }))
          pairs.push({ campaignId: campaign.id, placement });
      }
      await Promise.all(
        pairs.map(async (pair) => {
          while (Date.now() < ctx.deadline) {
            const body = { ...pair, ...endUser(ctx.rng) };
            if (ctx.rng() < 0.6) {
              await api.track('click', body, { unbillable: true });
            } else {
              if (!(await api.track('impression', body))) {
                await sleep(500);
                continue;
              }
              await clickTwice(ctx, api, body, { after: [1_000, 3_000], again: [100, 250] });
            }
            await sleep(between(ctx.rng, 500, 1_500));
          }
        }),
      );
    },
  },
  {
    name: 'double clicks with tokens',
    description:
      'tokens=true, honest otherwise: each page view’s impression, its click 1.5-4 s later, and for a third of them a second click 0.1-0.3 s after the first (a double click)',
    placements: OTHER_PLACEMENTS,
    expect: 'double clicks',
    run(ctx) {
      const api = partnerApi(ctx);
      return paced(ctx, 3, async () => {
        const body = await displayFor(ctx, api, endUser(ctx.rng), { tokens: true });
        if (!body || !(await api.track('impression', body))) return;
        await clickTwice(ctx, api, body, { after: [1_500, 4_000], again: [100, 300], share: 1 / 3 });
      });
    },
  },
  {
    name: 'double clicks without tokens',
    description:
      'no tokens, end users forwarded: two people see the same campaign and placement; one clicks it 1-3 s later, and double-clicks 0.1-0.25 s after that; the other display stays unclicked, so the second click finds it',
    placements: OTHER_PLACEMENTS,
    expect: 'double clicks',
    run(ctx) {
      const api = partnerApi(ctx);
      return paced(ctx, 3, async () => {
        const placement = pick(ctx.rng, ctx.placements);
        const [campaign] = await api.fetchCampaigns({ placement, limit: '1' });
        if (!campaign) return;
        const clicker = { campaignId: campaign.id, placement, ...endUser(ctx.rng) };
        const other = { campaignId: campaign.id, placement, ...endUser(ctx.rng) };
        if (!(await api.track('impression', clicker)) || !(await api.track('impression', other))) return;
        await clickTwice(ctx, api, clicker, { after: [1_000, 3_000], again: [100, 250] });
      });
    },
  },
  {
    name: 'token replays',
    description:
      'tokens=true; per page view one of: the impression reported twice (a replay, or the answer reused for another page view), a click with no impression of its token, or an impression, its click 1.5-4 s later and a second click',
    placements: OTHER_PLACEMENTS,
    expect: 'token abuse not billed',
    run(ctx) {
      const api = partnerApi(ctx);
      return paced(ctx, 4, async () => {
        const body = await displayFor(ctx, api, endUser(ctx.rng), { tokens: true });
        if (!body) return;
        const behaviour = ctx.rng();
        if (behaviour < 1 / 3) {
          if (!(await api.track('impression', body))) return;
          await sleep(between(ctx.rng, 200, 2_000));
          await api.track('impression', body, { unbillable: true });
        } else if (behaviour < 2 / 3) {
          await api.track('click', body, { unbillable: true });
        } else {
          if (!(await api.track('impression', body))) return;
          await clickTwice(ctx, api, body, { after: [1_500, 4_000], again: [100, 300] });
        }
      });
    },
  },
  ...BASELINE_PATTERNS,
  {
    name: 'shared addresses: click farm',
    description:
      'three partners, each following the contract at 8 page views a second (1% clicked) and visited every 2 s by a click farm behind one /24 (203.0.113.0/24) that clicks 40% of its displays: each key about 3.3% clicked, under the key threshold of 5× its placements’ baseline, and one key per partner',
    placements: SHARED_PLACEMENTS,
    partners: 3,
    signal: 'shared addresses',
    expect: 'flagged within 5 minutes',
    run: (ctx) =>
      Promise.all(
        ctx.apiKeys.flatMap((apiKey) => [
          followsContract({ ...ctx, apiKey }, { perSecond: 8, ctr: HONEST_CTR }),
          followsContract({ ...ctx, apiKey }, { perSecond: 0.5, ctr: 0.4, user: farmUser }),
        ]),
      ),
  },
  {
    name: 'shared addresses: carrier NAT',
    description:
      'four partners whose users all reach them through one mobile carrier’s NAT block (100.64.1.0/24), 5 page views a second each, 1% clicked: one address, many partners, clicked as people do',
    placements: SHARED_PLACEMENTS,
    partners: 4,
    expect: 'honest',
    run: (ctx) =>
      Promise.all(
        ctx.apiKeys.map((apiKey) =>
          followsContract({ ...ctx, apiKey }, { perSecond: 5, ctr: HONEST_CTR, user: carrierUser }),
        ),
      ),
  },
  {
    name: 'catch-up after an outage',
    description:
      'follows the contract at 10 page views a second, 1% clicked, each event with its occurredAt; its forwarder stops 15 s in for 3 minutes (a shorter run: all but its last 40 s), then sends the backlog in order, 8 requests at a time, each click after its impression was answered',
    placements: SHARED_PLACEMENTS,
    expect: 'catch-up',
    run: (ctx) => catchesUp(ctx, { perSecond: 10, ctr: HONEST_CTR, outage: outageOf(ctx.seconds) }),
  },
];
