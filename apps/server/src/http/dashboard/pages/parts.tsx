import type { ComponentChildren } from 'preact';

/**
 * A list as a table, or what to do next when it is empty. The table scrolls sideways inside its
 * frame on a narrow screen rather than the page, and the frame takes focus so keyboard users can
 * scroll it too. `headers` left false are columns this person does not get.
 */
export function DataTable(props: {
  label: string;
  count: number;
  /** The caption's words for one and for many items: `['One key', 'keys']`. */
  noun: [string, string];
  empty: ComponentChildren;
  headers: Array<string | false>;
  children: ComponentChildren;
}) {
  if (props.count === 0) return <p class="empty">{props.empty}</p>;
  return (
    <div class="table-wrap" tabIndex={0} role="region" aria-label={props.label}>
      <table>
        <caption>{props.count === 1 ? props.noun[0] : `${props.count} ${props.noun[1]}`}</caption>
        <thead>
          <tr>{props.headers.map((header) => header !== false && <th scope="col">{header}</th>)}</tr>
        </thead>
        <tbody>{props.children}</tbody>
      </table>
    </div>
  );
}

/** A secret shown once (a new key, an invitation link), with a copy button where scripts run. */
export function SecretField(props: { id: string; label: string; value: string }) {
  return (
    <>
      <div class="secret">
        <label for={props.id}>{props.label}</label>
        <input id={props.id} readonly value={props.value} class="mono" />
        <button type="button" id="copy-key" data-copy={props.id} hidden>
          Copy
        </button>
        <span id="copy-status" role="status"></span>
      </div>
      <script src="/assets/copy.js" defer></script>
    </>
  );
}
