import http from 'node:http';

export interface Page {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** The CSRF token of the page's first form. */
  csrf: string | undefined;
}

/**
 * A browser as far as the dashboard can tell over HTTP: it keeps cookies, sends its origin with
 * every form and posts forms URL-encoded. It does not follow redirects, so tests see them.
 */
export class BrowserClient {
  readonly cookies = new Map<string, string>();
  /** Every Set-Cookie header received, for the tests of cookie attributes. */
  readonly setCookies: string[] = [];

  constructor(
    readonly base: string,
    /** Sent as `Origin` with every form; null sends none. */
    private readonly origin: string | null = base,
  ) {}

  get(path: string, headers: Record<string, string> = {}): Promise<Page> {
    return this.send('GET', path, undefined, headers);
  }

  /** Posts `fields` as a form; the CSRF token is the caller's to include (or leave out). */
  post(path: string, fields: Record<string, string>, headers: Record<string, string> = {}): Promise<Page> {
    return this.send('POST', path, new URLSearchParams(fields).toString(), {
      'content-type': 'application/x-www-form-urlencoded',
      ...(this.origin !== null && { origin: this.origin }),
      ...headers,
    });
  }

  /** Posts `body` as it is (a form's fields repeated, JSON), with the origin a browser sends. */
  postBody(path: string, body: string, contentType = 'application/x-www-form-urlencoded'): Promise<Page> {
    return this.send('POST', path, body, {
      'content-type': contentType,
      ...(this.origin !== null && { origin: this.origin }),
    });
  }

  /** Opens `path` and submits its form with `fields` and the page's CSRF token. */
  async submit(formPage: string, action: string, fields: Record<string, string> = {}): Promise<Page> {
    const page = await this.get(formPage);
    if (!page.csrf) throw new Error(`no form with a CSRF token on ${formPage} (status ${page.status})`);
    return this.post(action, { _csrf: page.csrf, ...fields });
  }

  private send(method: string, path: string, body: string | undefined, headers: Record<string, string>) {
    const cookie = [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    return new Promise<Page>((resolve, reject) => {
      const request = http.request(
        new URL(path, this.base),
        { method, headers: { ...(cookie && { cookie }), ...headers } },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () => {
            for (const line of response.headers['set-cookie'] ?? []) {
              this.setCookies.push(line);
              const [pair] = line.split(';');
              const [name, value] = [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)];
              if (value === '' || /max-age=0|expires=thu, 01 jan 1970/i.test(line)) this.cookies.delete(name);
              else this.cookies.set(name, value);
            }
            const text = Buffer.concat(chunks).toString('utf8');
            const csrf = /name="_csrf" value="([^"]+)"/.exec(text)?.[1];
            resolve({ status: response.statusCode ?? 0, headers: response.headers, body: text, csrf });
          });
        },
      );
      request.on('error', reject);
      request.end(body);
    });
  }
}
