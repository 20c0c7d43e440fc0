import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { ROOT } from './helpers/process.js';

/** A partner's code, as if it sat beside the generated types; never written to disk. */
const USAGE = path.join(ROOT, 'apps/server/test/generated/partner-usage.ts');

/**
 * The type errors of `call`, a partner's fetch with openapi-fetch and the types openapi-typescript
 * generates from the document (`generated/placard-api.ts`), compiled as the tests are.
 */
function typeErrors(call: string): string[] {
  const source = [
    "import createClient from 'openapi-fetch';",
    "import type { paths } from './placard-api.js';",
    "const client = createClient<paths>({ baseUrl: 'http://127.0.0.1:8080' });",
    `export const answer = ${call};`,
  ].join('\n');
  const parsed = ts.getParsedCommandLineOfConfigFile(
    path.join(ROOT, 'apps/server/tsconfig.test.json'),
    {},
    { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined },
  );
  if (!parsed) throw new Error('apps/server/tsconfig.test.json cannot be read');
  const host = ts.createCompilerHost(parsed.options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (file, language, ...rest) =>
    path.resolve(file) === USAGE
      ? ts.createSourceFile(file, source, language)
      : getSourceFile(file, language, ...rest);
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (file) => path.resolve(file) === USAGE || fileExists(file);
  const program = ts.createProgram([USAGE], parsed.options, host);
  const usage = program.getSourceFile(USAGE);
  return ts
    .getPreEmitDiagnostics(program, usage)
    .map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
}

const fetchWith = (query: string) => `client.GET('/api/v1/campaigns/fetch', { params: { query: ${query} } })`;

describe('the types a partner generates from the API document', () => {
  it("take tokens as a boolean and device as one of the document's three names", () => {
    expect(typeErrors(fetchWith("{ placement: 'header_banner', tokens: true, device: 'mobile' }"))).toEqual(
      [],
    );
    expect(typeErrors(fetchWith("{ placement: 'header_banner', tokens: false, device: 'tablet' }"))).toEqual(
      [],
    );
  });

  it('refuse a device the document does not list, and tokens spelled as text', () => {
    expect(typeErrors(fetchWith("{ placement: 'header_banner', device: 'tv' }")).join('\n')).toMatch(
      /'"tv"' is not assignable to type '"mobile" \| "desktop" \| "tablet"/,
    );
    expect(typeErrors(fetchWith("{ placement: 'header_banner', tokens: 'true' }")).join('\n')).toMatch(
      /'string' is not assignable to type 'boolean/,
    );
  });
});
