import { WEBHOOK_SCHEMAS, webhooksSection } from './webhooks.js';
import swagger from '@fastify/swagger';
import swaggerUi, { type FastifySwaggerUiConfigOptions } from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import { HTML_CSP } from '../security-headers.js';
import { markOptionalBodies, withBodyErrors } from './bodies.js';
import { ErrorBody, ErrorCodeSchema, ManagementErrorBody, ManagementInputErrorBody } from './common.js';
import { MANAGEMENT_SCHEMAS } from './management.js';
import { DOCS_THEME } from './page.js';
import { PARTNER_PATHS, PARTNER_SCHEMAS } from './partner.js';
import { readOnlyOperations, serverOnly } from './server-only.js';

/** Shown on /docs and at the top of the document. */
const DESCRIPTION = `Placard delivers advertising campaigns to partner platforms.

**Partner API** (\`/api/v1\`): call it from your server with \`Authorization: Bearer <API key>\`.
Fetch campaigns for a placement, render them, report one impression per display and a click
per genuine user action. Never put the key in browser code: a valid key sent by a browser is
refused with 403 and reported to the operator.

**Management API** (\`/admin/v1\`): partners, keys, advertisers, campaigns and their review,
placements, the audit log and reports, with an admin token.

Every error body is \`{"status":"error","message":"..."}\`; the management API's add a stable
machine \`code\` (\`not_found\`, \`already_exists\`, …: the \`ErrorCode\` schema lists them),
to branch on instead of the message. Every response carries \`X-Request-Id\`.

Sections cited as "partner API 4.1" are those of the partner API guide, \`docs/partner-api.md\` in
Placard's repository; rules cited as D1 to D17 are its product rules, \`docs/product-rules.md\`.`;

export interface ApiDocsOptions {
  version: string;
}

/**
 * The OpenAPI 3.1 document (`/openapi.json`) and its browsable page (`/docs`), generated from the
 * route schemas: management routes are collected from Fastify as they are registered, so this
 * must be registered before them; the partner routes, served outside Fastify, are added from
 * `partner.ts`.
 */
async function documentPlugin(app: FastifyInstance, options: ApiDocsOptions): Promise<void> {
  for (const schema of [
    ErrorBody,
    ErrorCodeSchema,
    ManagementErrorBody,
    ManagementInputErrorBody,
    ...PARTNER_SCHEMAS,
    ...MANAGEMENT_SCHEMAS,
    ...WEBHOOK_SCHEMAS,
  ])
    app.addSchema(schema);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Placard',
        version: options.version,
        description: DESCRIPTION,
        license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
      },
      servers: [{ url: '/', description: 'The instance serving this document' }],
      tags: [
        {
          name: 'Partner API',
          description: 'Called by partner platforms from their servers, with an API key.',
        },
        { name: 'Partners', description: 'The publishers that call the partner API.' },
        { name: 'API keys', description: 'Partners’ keys: issue, rotate, revoke, suspend, limits.' },
        { name: 'Advertisers', description: 'Who campaigns belong to.' },
        { name: 'Campaigns', description: 'Campaigns and their review and lifecycle (D11).' },
        { name: 'Placements', description: 'The ad slots campaigns are fetched for (D1).' },
        { name: 'Audit', description: 'Every change, who made it and when.' },
        {
          name: 'Flags',
          description: 'Keys whose traffic looks fraudulent or broken, and their review (D15).',
        },
        {
          name: 'Admin tokens',
          description: 'Operators’ tokens for this API: issue, list, revoke, optional expiry.',
        },
        { name: 'Reports', description: 'Impressions, clicks and CTR, live.' },
        { name: 'Money', description: 'Revenue, partner earnings and margin by month, live.' },
        {
          name: 'Statements',
          description: 'Monthly statements of advertisers and partners, adjustments and payouts (D18).',
        },
        {
          name: 'Webhooks',
          description:
            'Endpoints told when something that concerns their account happens, signed per Standard Webhooks (D19); the events are in `webhooks`.',
        },
        { name: 'Operations', description: 'Health, readiness and metrics for operators’ tooling.' },
      ],
      components: {
        securitySchemes: {
          apiKey: {
            type: 'http',
            scheme: 'bearer',
            description: 'A partner’s API key. Server to server only.',
          },
          adminToken: { type: 'http', scheme: 'bearer', description: 'An admin token (`pla_…`).' },
        },
      },
    },
    // Shared schemas keep their own names in `components.schemas`.
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, index) =>
        typeof json['$id'] === 'string' ? json['$id'] : `def-${index}`,
    },
    transform: withBodyErrors,
    transformObject: (documentObject) => {
      if (!('openapiObject' in documentObject)) return documentObject.swaggerObject;
      const document = documentObject.openapiObject;
      // The partner API first: it is what most readers come for.
      const paths = {
        ...(serverOnly(PARTNER_PATHS) as typeof document.paths),
        ...markOptionalBodies(document.paths ?? {}),
      };
      return { ...document, paths, webhooks: webhooksSection() };
    },
  });
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    // swagger-ui's page loads only its own files; its default policy also allows an external
    // validator and forces https, which breaks a plain-http local instance.
    staticCSP: HTML_CSP,
    // Placard's title, icon and header, landmarks and contrast (page.ts); no vendor top bar (its
    // logo, its address box and its theme switch) and no links nested in the operations' buttons.
    theme: DOCS_THEME,
    uiConfig: {
      layout: 'BaseLayout',
      docExpansion: 'list',
      deepLinking: false,
      validatorUrl: null,
      // The partner operations are read-only there: see server-only.ts. Swagger UI takes a plugin
      // that returns a list of plugins, which its types do not describe.
      plugins: [readOnlyOperations] as unknown as FastifySwaggerUiConfigOptions['plugins'],
    },
  });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}

/** Not encapsulated, so it sees every route registered after it and `app.swagger()` is visible. */
export const apiDocs = fastifyPlugin(documentPlugin, { name: 'placard-api-docs' });
