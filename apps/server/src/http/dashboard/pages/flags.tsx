import type { flagView } from '../../../services/key-flags.js';
import type { ReportCounts } from '../../../services/reports.js';
import { fieldIdOf, ProblemSummary, wordProblems } from './form-problems.js';
import { Layout, type PageContext, type Refused } from './layout.js';
import { DataTable, FieldForm, type Paging } from './parts.js';
import { when } from './format.js';

export type FlagRow = ReturnType<typeof flagView> & {
  keyPrefix: string;
  /** Every key the flag names: its own, or a partner flag's keys (`partner ctr`), most clicked first. */
  keyPrefixes: string[];
  partnerName: string;
};

/** One reason events were not billed, and how many of the partner's impressions and clicks had it. */
export interface ReasonRow {
  reason: string;
  counts: ReportCounts;
}

const SIGNAL_NAMES: Record<string, string> = {
  ctr: 'Click-through rate',
  burst: 'Burst',
  'clicks without impressions': 'Clicks without impressions',
  'partner ctr': 'Partner click-through rate',
  'shared addresses': 'Shared end-user addresses',
};

/** The flags that name a partner's keys, not one key: suspending one suspends every key it lists. */
const partnerSignal = (signal: string) => signal === 'partner ctr' || signal === 'shared addresses';

/** One end-user address of a `shared addresses` flag, as its evidence lists it. */
interface SharedAddress {
  address: string;
  partners: number;
  keys: number;
  impressions: number;
  clicks: number;
  ctr: number;
  baselineCtr: number;
  ratio: number;
  partnerClicks: number;
}

const percent = (rate: number) => `${Number((rate * 100).toFixed(2))}%`;

/** A partner flag's keys, each with its own clicks and ratio to the baseline. */
interface PartnerKey {
  apiKeyId: number;
  impressions: number;
  clicks: number;
  ratio: number;
}

const number = new Intl.NumberFormat('en-US');
const share = (part: number, whole: number) => (whole === 0 ? '–' : `${((part / whole) * 100).toFixed(1)}%`);

/** The evidence in words and figures: what was seen, over which window, against which threshold. */
function Evidence({ flag }: { flag: FlagRow }) {
  const evidence = flag.evidence;
  const text = (name: string) => (typeof evidence[name] === 'string' ? evidence[name] : undefined);
  const end = text('windowEnd');
  // A click-through rate judged on the key's day: its summary already says since when.
  const day = evidence['span'] === 'day';
  return (
    <>
      <p>{flag.summary}</p>
      <p class="note">
        {end && (
          <>
            {day
              ? `Over its day, to ${when(Date.parse(end))}`
              : `Over the 5 minutes to ${when(Date.parse(end))}`}
            {(flag.signal === 'ctr' || partnerSignal(flag.signal)) &&
              `, against the ${String(evidence['baselineSource'])} of ${day ? 'the same hours' : 'the last 24 hours'}`}
            {(flag.signal === 'ctr' || partnerSignal(flag.signal)) &&
              evidence['baselineRate'] === 'median of partners' &&
              ` (the median of ${String(evidence['baselinePartners'])} partners' rates)`}
            .{' '}
          </>
        )}
        Measured {String(evidence['measure'])} where the threshold is {String(evidence['threshold'])}.
      </p>
      {flag.signal === 'shared addresses' && Array.isArray(evidence['addresses']) && (
        <ul class="note" aria-label={`End-user addresses of flag ${flag.id}`}>
          {(evidence['addresses'] as SharedAddress[]).map((address) => (
            <li key={address.address}>
              <code>{address.address}</code>: {number.format(address.clicks)} clicks on{' '}
              {number.format(address.impressions)} impressions ({percent(address.ctr)}, {address.ratio}× the
              baseline of {percent(address.baselineCtr)}) through {address.partners} partners and{' '}
              {address.keys} keys, {number.format(address.partnerClicks)} of the clicks through this partner
            </li>
          ))}
        </ul>
      )}
      {partnerSignal(flag.signal) && Array.isArray(evidence['keys']) && (
        <ul class="note">
          {(evidence['keys'] as PartnerKey[]).map((key, i) => (
            <li key={key.apiKeyId}>
              <code>{flag.keyPrefixes[i]}…</code>: {number.format(key.clicks)} clicks on{' '}
              {number.format(key.impressions)} impressions
              {flag.signal === 'shared addresses' ? ' from them' : ''}, {key.ratio}× alone
            </li>
          ))}
        </ul>
      )}
    </>
  );
}

/** What the operator may do with an open flag: dismiss it with a note, or suspend its key. */
function Review({ flag, csrf, refused }: { flag: FlagRow; csrf: string; refused: Refused | undefined }) {
  const partnerFlag = partnerSignal(flag.signal);
  const name = partnerFlag
    ? `flag ${flag.id} of ${flag.partnerName}`
    : `flag ${flag.id} of key ${flag.keyPrefix}`;
  const count = flag.keyPrefixes.length;
  const keys = partnerFlag ? (count === 1 ? 'its key' : `its ${count} keys`) : 'key';
  return (
    <div class="actions">
      <FieldForm
        action={`/flags/${flag.id}/dismiss`}
        csrf={csrf}
        name="note"
        label={`Why dismiss ${name}`}
        placeholder="why this traffic is fine"
        required
        maxLength={500}
        button="Dismiss"
        buttonLabel={`Dismiss ${name}`}
        refused={refused}
      />
      <FieldForm
        action={`/flags/${flag.id}/suspend`}
        csrf={csrf}
        name="reason"
        label={`Reason to suspend ${keys}: ${name}`}
        placeholder="reason the partner reads (default: the evidence)"
        maxLength={500}
        button={`Suspend ${keys}`}
        // The button's text begins its accessible name, so a voice user can say what they see.
        buttonLabel={`Suspend ${keys}: ${name}`}
        danger
        refused={refused}
      />
    </div>
  );
}

/** The open flags (waiting for a review) or the reviewed ones, as a table. */
function FlagTable(props: {
  which: 'open' | 'reviewed';
  flags: FlagRow[];
  empty: string;
  operator: boolean;
  /** The operator's admins and managers get the review forms on open flags. */
  review?: boolean;
  paging: Paging;
  csrf: string;
  refused?: Refused | undefined;
}) {
  const { flags, operator, review = false, which } = props;
  return (
    <DataTable
      label={`${which === 'open' ? 'Open' : 'Reviewed'} flags`}
      count={flags.length}
      noun={[`One ${which} flag`, `${which} flags`]}
      paging={props.paging}
      empty={props.empty}
      headers={['Signal', 'Key', operator && 'Partner', 'Evidence', 'Raised', 'Status', review && 'Review']}
    >
      {flags.map((flag) => (
        <tr key={flag.id}>
          <td>
            {SIGNAL_NAMES[flag.signal] ?? flag.signal}
            <p class="note">Flag {flag.id}</p>
          </td>
          <td>
            {flag.keyPrefixes.map((prefix) => (
              <>
                <code key={prefix}>{prefix}…</code>{' '}
              </>
            ))}
            {flag.signal === 'partner ctr' && <p class="note">all the partner’s keys that sent</p>}
            {flag.signal === 'shared addresses' && (
              <p class="note">the partner’s keys clicked from the addresses</p>
            )}
          </td>
          {operator && <td>{flag.partnerName}</td>}
          <td>
            <Evidence flag={flag} />
          </td>
          <td>
            {when(flag.createdAt)}
            {flag.updatedAt !== flag.createdAt && <p class="note">updated {when(flag.updatedAt)}</p>}
          </td>
          <td>
            <span class={`status status-${flag.status}`}>{flag.status}</span>
            {flag.reviewedAt !== null && (
              <p class="note">
                {when(flag.reviewedAt)}
                {flag.reviewedBy === 'system' && ' by the automatic policy'}
                {flag.reviewNote && `: ${flag.reviewNote}`}
              </p>
            )}
          </td>
          {review && (
            <td>
              {flag.status === 'open' && <Review flag={flag} csrf={props.csrf} refused={props.refused} />}
            </td>
          )}
        </tr>
      ))}
    </DataTable>
  );
}

/**
 * Key flags (D15): for the operator, the queue of open flags with their evidence and the forms to
 * dismiss one or suspend its key, then the reviewed ones, each list paged; for a partner, its own keys' flags and
 * what of its traffic was not billed today, by reason, so a broken integration shows before a
 * suspension.
 */
export function FlagsPage(props: {
  page: PageContext;
  operator: boolean;
  canReview: boolean;
  open: FlagRow[];
  openPaging: Paging;
  reviewed: FlagRow[];
  reviewedPaging: Paging;
  /** The partner's events today by reason (operator: none). */
  reasons?: { rows: ReasonRow[]; impressions: number; clicks: number };
  refused?: Refused | undefined;
}) {
  const { page, operator } = props;
  return (
    <Layout title="Flags" page={page} current="/flags">
      {props.refused && (
        <ProblemSummary
          worded={wordProblems(props.refused.problem, props.refused.problems)}
          idOf={(name) => fieldIdOf(props.refused!.action, name)}
        />
      )}
      <p class="hint">
        {operator
          ? 'Keys whose traffic looks fraudulent or broken, checked every 30 seconds over the last 5 minutes: a click-through rate far from its placements’ baseline (over the last day too, for a key too slow to show in 5 minutes), bursts, clicks without impressions; a partner’s keys together clicked far above the baseline, fraud spread so that no key alone shows it; and end-user addresses clicking far above it through several partners’ keys. Dismiss a flag that is fine, or suspend its key (a partner flag: every key it lists).'
          : 'Placard checks your keys’ traffic every 30 seconds. A flag here means it looks broken or fraudulent: fix the integration before the operator suspends the key.'}
      </p>
      <h2>Open</h2>
      <FlagTable
        which="open"
        flags={props.open}
        paging={props.openPaging}
        empty={
          operator
            ? 'No open flags: no key’s traffic has looked fraudulent or broken since the last review.'
            : 'No open flags: your keys’ traffic looks as it should.'
        }
        operator={operator}
        review={props.canReview}
        csrf={page.csrf}
        refused={props.refused}
      />
      <h2>Reviewed</h2>
      <FlagTable
        which="reviewed"
        flags={props.reviewed}
        paging={props.reviewedPaging}
        empty="No flag has been reviewed yet."
        operator={operator}
        csrf={page.csrf}
      />
      {props.reasons && (
        <>
          <h2>Not billed today</h2>
          <DataTable
            label="Events not billed today, by reason"
            count={props.reasons.rows.length}
            noun={['One reason', 'reasons']}
            empty="Every impression and click your servers reported today was billed."
            headers={['Reason', 'Impressions', 'Clicks', 'Share of your clicks']}
          >
            {props.reasons.rows.map((row) => (
              <tr key={row.reason}>
                <td>{row.reason}</td>
                <td>{number.format(row.counts.nonBillableImpressions)}</td>
                <td>{number.format(row.counts.nonBillableClicks)}</td>
                <td>{share(row.counts.nonBillableClicks, props.reasons!.clicks)}</td>
              </tr>
            ))}
          </DataTable>
          <p>
            <a href="/reports?window=day&breakdown=reason">The delivery report by reason not billed</a> has
            the figures by hour; <a href="/integration">the integration page</a> shows how to send events that
            count.
          </p>
        </>
      )}
    </Layout>
  );
}
