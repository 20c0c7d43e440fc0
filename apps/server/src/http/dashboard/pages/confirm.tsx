import { CsrfField, Layout, type PageContext } from './layout.js';

/**
 * Asks before what cannot be undone (archiving a campaign, revoking a key): what will happen, then
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
}) {
  return (
    <Layout title={props.title} page={props.page} current={props.current}>
      <ul class="consequences">
        {props.consequences.map((consequence) => (
          <li key={consequence}>{consequence}</li>
        ))}
      </ul>
      <form method="post" action={props.action} class="actions">
        <CsrfField token={props.page.csrf} />
        <button type="submit" class="danger">
          {props.button}
        </button>
        <a href={props.back.href}>{props.back.text}</a>
      </form>
    </Layout>
  );
}
