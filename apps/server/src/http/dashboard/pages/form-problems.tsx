import type { FieldProblem } from '../../../domain/errors.js';

/** A form's labels as the person sees them, by field name; a name left out reads as words (`blockedCategories`: "Blocked categories"). */
export type Labels = Readonly<Record<string, string>>;

/** What a refused form's problems say in the form's own words: by field name, and the rest. */
export interface WordedProblems {
  /** Each field's problems, starting with its label: "Ends must be after Starts". */
  fields: ReadonlyMap<string, string>;
  /** Problems about no field of the form (a name already taken, a campaign that cannot do that now). */
  others: string[];
}

/** `blockedCategories` as a label: "Blocked categories". */
const asWords = (name: string): string => {
  const words = name.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
};

/** The form field a service's field is typed in: `caps.clicksDaily` is the form's `clicksDaily`. */
const formFieldOf = (field: string): string =>
  field
    .replace(/\[\d+\]/g, '')
    .split('.')
    .at(-1) ?? field;

/**
 * The services' wording that names the management API's types, and what a person filling in a form
 * reads instead: the form's fields are text boxes, not JSON values.
 */
const PLAIN_WORDS: ReadonlyArray<[RegExp, string]> = [
  [/a positive integer or null/g, 'a whole number above 0, or left empty'],
  [/, or null for the default/g, ', or left empty for the default'],
  [/an ISO 8601 date-time such as \S+/g, 'a date and time'],
  [/an ISO 3166-1 alpha-2 code/g, 'a two-letter country code such as US'],
  [/is required: a string of /g, 'is required: '],
  [/an array of /g, 'a list of '],
  [/^even needs /, 'evenly needs '],
];

/** A service's message about a field, with the label of every field it names. */
function reworded(message: string, labels: Labels): string {
  let text = message;
  for (const [pattern, plain] of PLAIN_WORDS) text = text.replace(pattern, plain);
  // Field names in the middle of a message are the API's camelCase (`must be after startAt`).
  return text.replace(
    /\b(?:caps\.)?([a-z]+[A-Z][A-Za-z]*)\b/g,
    (name, field: string) => labels[field] ?? name,
  );
}

/**
 * The problems a service found with a form, each beside its field in the words of the form's
 * labels; `message` stands alone when the service named no field.
 */
export function wordProblems(
  message: string,
  problems: readonly FieldProblem[] | undefined,
  labels: Labels = {},
): WordedProblems {
  if (!problems || problems.length === 0) return { fields: new Map(), others: [message] };
  const fields = new Map<string, string>();
  for (const problem of problems) {
    const name = formFieldOf(problem.field);
    const text = reworded(problem.message, labels);
    // A message that starts with the value it is about reads after a colon: Countries: "XX" is not…
    const sentence = `${labels[name] ?? asWords(name)}${text.startsWith('"') ? ':' : ''} ${text}`;
    const before = fields.get(name);
    fields.set(name, before === undefined ? sentence : `${before}; ${sentence}`);
  }
  return { fields, others: [] };
}

/** The id of a field's problem, for its `aria-describedby` and the summary's link. */
export const problemId = (fieldId: string): string => `${fieldId}-problem`;

/** A field's id unique on the page, from the form's action: `/keys/7/suspend` and `reason`. */
export const fieldIdOf = (action: string, name: string): string =>
  `${action.replace(/[^A-Za-z0-9]+/g, '-').replace(/^-|-$/g, '')}-${name}`;

/** A field's problem, beside it; the field names it in `aria-describedby`. */
export function FieldMessage(props: { fieldId: string; message: string | undefined }) {
  if (props.message === undefined) return null;
  return (
    <p class="field-problem" id={problemId(props.fieldId)}>
      {props.message}
    </p>
  );
}

/**
 * What a field with a problem carries: `aria-invalid` and its problem (then its hint) in
 * `aria-describedby`; nothing for a field without one.
 */
export function invalidAttributes(fieldId: string, message: string | undefined, hintId?: string) {
  const describedBy = [message !== undefined ? problemId(fieldId) : undefined, hintId].filter(Boolean);
  return {
    'aria-invalid': message !== undefined ? ('true' as const) : undefined,
    'aria-describedby': describedBy.length > 0 ? describedBy.join(' ') : undefined,
  };
}

/**
 * The summary at the top of a page whose form was refused: every problem, each linking to its
 * field (`idOf` gives a field's id); a problem about no field is the message alone.
 */
export function ProblemSummary(props: {
  worded: WordedProblems | undefined;
  idOf: (name: string) => string;
}) {
  const { worded } = props;
  if (!worded) return null;
  const fields = [...worded.fields];
  if (fields.length === 0) {
    return (
      <div class="problem" role="alert">
        {worded.others.map((message) => (
          <p key={message}>{message}</p>
        ))}
      </div>
    );
  }
  return (
    <div class="problem" role="alert">
      <p>
        {fields.length === 1
          ? 'Nothing was saved: one field needs a change.'
          : `Nothing was saved: ${fields.length} fields need a change.`}
      </p>
      <ul>
        {fields.map(([name, message]) => (
          <li key={name}>
            <a href={`#${props.idOf(name)}`}>{message}</a>
          </li>
        ))}
        {worded.others.map((message) => (
          <li key={message}>{message}</li>
        ))}
      </ul>
    </div>
  );
}
