import { CsrfField, Layout, type PageContext } from './layout.js';

/**
 * Asks before what cannot be undone (archiving a campaign, revoking a key, issuing a month): what will happen, then
 * a form that does it and a way back. A page of its own, so it works without JavaScript.
 */
export function ConfirmPage(props: {
  page: PageContext;
  title: string;
  current: string;
  /** What will happen, each a sentence. */
  consequences: string[];
  action: string;
  button: string;
  back: { href: string; text: string };
  /** What the form sends besides its token (the month to issue). */
  hidden?: Record<string, string>;
  /** What the button says once pressed, for a change that takes a while (`public/busy.js`). */
  busy?: string;
}) {
  return (
    <Layout
      title={props.title}
      page={props.page}
      current={props.current}
      {...(props.busy !== undefined && { scripts: ['/assets/busy.js'] })}
    >
      <ul class="consequences">
        {props.consequences.map((consequence) => (
          <li key={consequence}>{consequence}</li>
        ))}
      </ul>
      <form method="post" action={props.action} class="actions" data-busy={props.busy}>
        <CsrfField token={props.page.csrf} />
        {Object.entries(props.hidden ?? {}).map(([name, value]) => (
          <input key={name} type="hidden" name={name} value={value} />
        ))}
        <button type="submit" class="danger">
          {props.button}
        </button>
        <a href={props.back.href}>{props.back.text}</a>
        {props.busy !== undefined && <span class="note" role="status"></span>}
      </form>
    </Layout>
  );
}
