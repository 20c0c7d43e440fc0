import type { KeyStatusView } from '../../../services/partners.js';
import { Layout, type PageContext } from './layout.js';
import { DataTable } from './parts.js';
import { when } from './format.js';

/** A block of code people copy: it scrolls inside its frame, and takes focus so keyboards can. */
function Code(props: { label: string; text: string }) {
  return (
    <pre tabIndex={0} role="region" aria-label={props.label}>
      <code>{props.text}</code>
    </pre>
  );
}

/**
 * A new idempotency key at each run, in any POSIX shell: 32 random hex digits from od and tr, which
 * every Unix-like system has (uuidgen is missing from many, and curl then leaves the header out).
 */
export const NEW_IDEMPOTENCY_KEY = "$(od -An -N16 -tx1 /dev/urandom | tr -d ' \\n')";

/** The three calls of the delivery API as curl commands for this server and placement. */
export function curlCommands(baseUrl: string, placement: string) {
  const auth = '  -H "Authorization: Bearer $PLACARD_API_KEY"';
  const event = (kind: 'impression' | 'click') =>
    [
      `curl -s -X POST "${baseUrl}/api/v1/campaigns/${kind}" \\`,
      `${auth} \\`,
      '  -H "Content-Type: application/json" \\',
      `  -H "Idempotency-Key: ${NEW_IDEMPOTENCY_KEY}" \\`,
      `  -d "{\\"campaignId\\": $CAMPAIGN_ID, \\"placement\\": \\"${placement}\\"}"`,
    ].join('\n');
  return {
    fetch: `curl -s "${baseUrl}/api/v1/campaigns/fetch?placement=${placement}&limit=3" \\\n${auth}`,
    impression: event('impression'),
    click: event('click'),
  };
}

function sdkSnippet(baseUrl: string, placement: string): string {
  return `import { PlacardClient } from '@placard/client';

// On your server only: the key comes from your configuration, never from a page.
const placard = new PlacardClient({
  apiKey: process.env.PLACARD_API_KEY!,
  baseUrl: '${baseUrl}',
});

const [campaign] = await placard.fetchCampaigns({ placement: '${placement}', limit: 1 });
if (campaign) {
  const display = placard.display(campaign, '${placement}');
  // ...render campaign.title and campaign.description in the slot; once it is visible:
  await display.impression(); // once per display, however often it is called
  // later, for a genuine user click only:
  await display.click(); // then send the user to campaign.destinationUrl
}`;
}

/** A partner's integration page: where to call, with what, and the rules of the contract. */
export function IntegrationPage(props: {
  page: PageContext;
  baseUrl: string;
  keys: Array<{
    id: number;
    prefix: string;
    label: string | null;
    status: KeyStatusView;
    lastUsedAt: number | null;
  }>;
  /** The placements the partner may ask for (enabled ones), and the one the commands use. */
  placements: Array<{ id: string; description: string }>;
  placement: string | undefined;
  /** The partner's own id: its revenue share's page. */
  partnerId: number;
}) {
  const { baseUrl, placement } = props;
  const commands = placement === undefined ? undefined : curlCommands(baseUrl, placement);
  return (
    <Layout title="Integration" page={props.page} current="/integration">
      <p>
        Your server calls Placard at <code>{baseUrl}</code>: it fetches campaigns for a placement, shows them,
        and reports an impression per display and a click per genuine click. Every call carries one of your
        API keys. What your traffic earns follows your{' '}
        <a href={`/partners/${props.partnerId}/revenue-shares`}>revenue share</a>.
      </p>

      <h2 class="section-title">Your API keys</h2>
      <DataTable
        label="Your API keys"
        count={props.keys.length}
        noun={['One key', 'keys']}
        empty={
          <>
            No API keys yet. <a href="/keys">Create one on API keys</a>: it is shown once, so store it in your
            server's configuration as <code>PLACARD_API_KEY</code>.
          </>
        }
        headers={['Key', 'Label', 'Status', 'Last used']}
      >
        {props.keys.map((key) => (
          <tr key={key.id}>
            <td>
              <code>{key.prefix}…</code>
            </td>
            <td>{key.label ?? '—'}</td>
            <td>
              <span class={`status status-${key.status}`}>{key.status}</span>
            </td>
            <td>{when(key.lastUsedAt)}</td>
          </tr>
        ))}
      </DataTable>
      {props.keys.length > 0 && (
        <p class="hint">
          Create, rotate and revoke keys on <a href="/keys">API keys</a>. The full key is shown only when it
          is created: the commands below read it from <code>$PLACARD_API_KEY</code>.
        </p>
      )}

      <h2 class="section-title">Try it with curl</h2>
      {commands === undefined ? (
        <p class="empty">
          No placement is enabled yet, so there is nothing to fetch. Ask the operator to enable one; it then
          appears under <a href="/placements">Placements</a>.
        </p>
      ) : (
        <>
          <form method="get" action="/integration" class="inline">
            <label for="placement">Placement</label>
            <select id="placement" name="placement">
              {props.placements.map((option) => (
                <option value={option.id} key={option.id} selected={option.id === placement}>
                  {option.id}
                </option>
              ))}
            </select>
            <button type="submit">Show its commands</button>
          </form>
          <p>
            1. Fetch the campaigns for <code>{placement}</code>, with <code>PLACARD_API_KEY</code> set to your
            key:
          </p>
          <Code label="Fetch command" text={commands.fetch} />
          <p>
            2. Set <code>CAMPAIGN_ID</code> to the <code>id</code> of a campaign in the answer, and report
            that it was displayed. Each run sends a new <code>Idempotency-Key</code> (32 random hex digits,
            made by <code>od</code> in any shell); your server makes one per display and sends it again with
            every retry of that display, so it counts once.
          </p>
          <Code label="Impression command" text={commands.impression} />
          <p>3. When a person clicks it, report the click, then send them to its destinationUrl:</p>
          <Code label="Click command" text={commands.click} />
        </>
      )}

      {placement !== undefined && (
        <>
          <h2 class="section-title">With the SDK</h2>
          <p>
            <code>@placard/client</code> (TypeScript, Node 20 or later) does the same, with retries, caching
            and one impression per display built in:
          </p>
          <Code label="SDK example" text={sdkSnippet(baseUrl, placement)} />
        </>
      )}

      <h2 class="section-title">Rules that matter</h2>
      <ul class="rules">
        <li>
          Keys stay on your servers. A key sent from a web browser is refused, and marked with a warning on{' '}
          <a href="/keys">API keys</a>.
        </li>
        <li>
          One impression per display, once the campaign is visible: not on re-renders, not in loops. A click
          only for a real click, after its impression; clicks made by code can get a key suspended.
        </li>
        <li>A campaign fetched for one placement is shown in that placement only, and reported with it.</li>
        <li>
          Retry a 429 or 503 after <code>Retry-After</code>, with the same <code>Idempotency-Key</code> as the
          first attempt: the event then counts once. A 401 or 403 will not get better by retrying: check the
          key's status on <a href="/keys">API keys</a>.
        </li>
        <li>
          Reuse a fetch answer for 5 seconds (its <code>Cache-Control</code>) instead of asking again.
        </li>
      </ul>
      <p>
        Every operation, field and message: <a href="/docs">the API reference</a>.
      </p>
    </Layout>
  );
}
