import { Layout, type PageContext } from './layout.js';
import { ListTable, type Paging } from './parts.js';
import { when } from './format.js';

export interface AuditRow {
  id: number;
  at: number;
  /** Who, in words: a user's e-mail address, an admin token's label, the command line. */
  who: string;
  action: string;
  objectType: string;
  objectId: string;
  reason: string | null;
  /** The fields the change touched (top-level names), empty for a creation. */
  changed: string[];
}

/** The objects that have a page of their own, linked from the log. */
const OBJECT_PAGES: Record<string, (id: string) => string> = {
  campaign: (id) => `/campaigns/${id}`,
};

/** What an entry changed, linked when it has a page of its own: "campaign 4", "api key 9". */
function AuditObject({ entry }: { entry: AuditRow }) {
  const link = OBJECT_PAGES[entry.objectType]?.(entry.objectId);
  const object = `${entry.objectType.replace('_', ' ')} ${entry.objectId}`;
  return link ? <a href={link}>{object}</a> : <>{object}</>;
}

/** The audit log, newest first: every change, who made it, to what. */
export function AuditPage(props: { page: PageContext; entries: AuditRow[]; paging: Paging }) {
  return (
    <Layout title="Audit log" page={props.page} current="/audit">
      <p class="hint">
        Every change made in the dashboard, through the management API or with the placard command, newest
        first.
      </p>
      <ListTable
        label="Audit log"
        noun={['One entry', 'entries']}
        rows={props.entries}
        paging={props.paging}
        empty="Nothing has changed yet. Changes appear here as soon as they are made, with who made them."
        columns={[
          { header: 'When', cell: (entry) => when(entry.at) },
          { header: 'Who', cell: (entry) => entry.who },
          {
            header: 'What',
            cell: (entry) => (
              <>
                {entry.action.replaceAll('_', ' ')}
                {entry.reason && <p class="note">Reason: {entry.reason}</p>}
                {entry.changed.length > 0 && <p class="note">Changed: {entry.changed.join(', ')}</p>}
              </>
            ),
          },
          { header: 'Object', cell: (entry) => <AuditObject entry={entry} /> },
        ]}
      />
    </Layout>
  );
}
