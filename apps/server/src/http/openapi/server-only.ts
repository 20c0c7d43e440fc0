/**
 * The partner API refuses a key sent by a browser (403, and the operator sees the key as leaked), so
 * the `/docs` page, itself a browser, must not offer to send one. Each partner operation is marked
 * `x-try-it-out: false` and says why, with the curl line to try it from a terminal; the page's plugin
 * below hides "Try it out" for operations so marked.
 */

/** The vendor extension that makes an operation read-only on `/docs`. */
export const TRY_IT_OUT = 'x-try-it-out';

interface Operation {
  description?: string;
  parameters?: ReadonlyArray<{ name: string; in: string; example?: unknown }>;
}

const EXAMPLE_BODY = '{"campaignId":1,"placement":"header_banner","location":"US","device":"mobile"}';

/** A curl line for the operation, with its query parameters' examples or the tracking body. */
function curlLine(method: string, path: string, operation: Operation): string {
  const query = (operation.parameters ?? [])
    .filter((parameter) => parameter.in === 'query' && parameter.example !== undefined)
    .map((parameter) => `${parameter.name}=${String(parameter.example)}`)
    .join('&');
  const url = `$PLACARD_URL${path}${query === '' ? '' : `?${query}`}`;
  if (method === 'get') return `curl -H "Authorization: Bearer $PLACARD_API_KEY" "${url}"`;
  return (
    `curl -X ${method.toUpperCase()} -H "Authorization: Bearer $PLACARD_API_KEY" ` +
    `-H 'Content-Type: application/json' -d '${EXAMPLE_BODY}' "${url}"`
  );
}

/** The partner paths, each operation read-only on `/docs` and saying how to call it instead. */
export function serverOnly(
  paths: Record<string, Record<string, Operation>>,
): Record<string, Record<string, unknown>> {
  return Object.fromEntries(
    Object.entries(paths).map(([path, operations]) => [
      path,
      Object.fromEntries(
        Object.entries(operations).map(([method, operation]) => [
          method,
          {
            ...operation,
            description:
              `${operation.description ?? ''}\n\n` +
              '**Server to server only.** This page does not send requests here: a browser must ' +
              'never hold an API key, and the API refuses a key a browser sends (403) and reports ' +
              'it to the operator as leaked. Try it from a terminal:\n\n' +
              `\`\`\`sh\n${curlLine(method, path, operation)}\n\`\`\``,
            [TRY_IT_OUT]: false,
          },
        ]),
      ),
    ]),
  );
}

/** The part of Swagger UI's system the plugin reads. */
interface SpecState {
  getIn(path: string[]): unknown;
}

/** Swagger UI's global in the page; only `readOnlyOperations` refers to it, and only there. */
declare const SwaggerUIBundle: { plugins: { DownloadUrl: unknown } };

/**
 * Swagger UI's plugins for `/docs`, run in the page: its default one (which loads the document)
 * and a selector that keeps "Try it out" away from operations marked `x-try-it-out: false`.
 * Swagger UI serialises this function with `toString()` into its initializer script, so it must not
 * refer to anything outside its own body but the page's globals (hence the literal extension name).
 */
export function readOnlyOperations() {
  return [
    SwaggerUIBundle.plugins.DownloadUrl,
    {
      statePlugins: {
        spec: {
          selectors: {
            allowTryItOutFor: (state: SpecState, path: string, method: string) =>
              state.getIn(['json', 'paths', path, method, 'x-try-it-out']) !== false,
          },
        },
      },
    },
  ];
}
