import fs from 'node:fs';
import path from 'node:path';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { ROOT } from './process.js';

/** The committed API document; a test checks it equals what the server serves. */
export const DOCUMENT_PATH = path.join(ROOT, 'docs/openapi.json');

interface MediaType {
  schema?: unknown;
}
interface Response {
  content?: Record<string, MediaType>;
}
interface Parameter {
  name: string;
  in: string;
  schema?: { type?: string };
}
interface Operation {
  operationId?: string;
  security?: unknown[];
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content: Record<string, MediaType> };
  responses: Record<string, Response>;
}
export type Document = {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, unknown> };
};

/** The parts of an answer the document describes. */
export interface Answer {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** Where an answer was documented: the operation and its response. */
export interface Match {
  route: string;
  method: string;
  status: string;
}

const pointer = (...parts: string[]) =>
  parts.map((part) => part.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

/**
 * Checks answers against an OpenAPI document: the route's operation must list the status, the
 * answer's media type must be one the status documents (or it has no body where none is
 * documented), and the body must validate against that media type's schema.
 */
export class Conformance {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  private readonly validators = new Map<string, ValidateFunction>();
  private readonly routes: { template: string; pattern: RegExp }[];
  /** Every answer checked, as `METHOD route status`: what a test file has exercised. */
  readonly seen = new Set<string>();

  constructor(readonly document: Document) {
    addFormats.default(this.ajv);
    this.ajv.addSchema({ ...document, $id: 'placard:openapi' });
    // Literal paths before templated ones, so `/a/b` never matches `/a/{id}` first.
    this.routes = Object.keys(document.paths)
      .sort((a, b) => a.split('{').length - b.split('{').length)
      .map((template) => ({
        template,
        pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`),
      }));
  }

  /** The documented route a request path falls under, if any. */
  route(url: string): string | undefined {
    const pathOnly = new URL(url, 'http://placard.invalid').pathname;
    return this.routes.find(({ pattern }) => pattern.test(pathOnly))?.template;
  }

  /**
   * Why an answer is not what the document says, or undefined when it is. Paths the document does
   * not know are not its concern; on a path it knows, a method without an operation may only be
   * refused (404 or 405), since anything else is an operation the document lacks.
   */
  problem(method: string, url: string, answer: Answer): string | undefined {
    const route = this.route(url);
    if (route === undefined) return undefined;
    const lower = method.toLowerCase();
    const operation = this.document.paths[route]?.[lower];
    if (operation === undefined) {
      if (answer.statusCode === 404 || answer.statusCode === 405) return undefined;
      return `${method.toUpperCase()} ${route} answered ${answer.statusCode}, but the document has no such operation`;
    }
    const where = `${method.toUpperCase()} ${route} answered ${answer.statusCode}`;
    const status = String(answer.statusCode);
    this.seen.add(`${method.toUpperCase()} ${route} ${status}`);
    const response = operation.responses[status];
    if (response === undefined) return `${where}, a status the document does not list: ${answer.body}`;
    const contentType = answer.headers['content-type'];
    const mediaType = typeof contentType === 'string' ? contentType.split(';', 1)[0].trim() : undefined;
    const content = response.content ?? {};
    if (Object.keys(content).length === 0) {
      if (answer.body === '') return undefined;
      return `${where} with a body (${mediaType}) the document does not describe`;
    }
    if (mediaType === undefined || content[mediaType] === undefined) {
      return `${where} as ${mediaType}, not one of ${Object.keys(content).join(', ')}: ${answer.body}`;
    }
    const validate = this.validator(route, lower, status, mediaType);
    let body: unknown = answer.body;
    if (mediaType.endsWith('json')) {
      try {
        body = JSON.parse(answer.body);
      } catch {
        return `${where} with a body that is not JSON: ${answer.body}`;
      }
    }
    if (validate(body)) return undefined;
    return `${where}: ${this.ajv.errorsText(validate.errors)}\n${answer.body}`;
  }

  /** Whether the document accepts a JSON request body for an operation (absent: undefined). */
  acceptsBody(method: string, route: string, body: unknown): boolean {
    const lower = method.toLowerCase();
    const requestBody = this.document.paths[route]?.[lower]?.requestBody;
    if (body === undefined) return requestBody?.required !== true;
    if (requestBody === undefined) return false;
    return this.compiled(
      pointer('paths', route, lower, 'requestBody', 'content', 'application/json', 'schema'),
    )(body);
  }

  /**
   * Whether the document accepts a value, as written in the query string, for one of an
   * operation's query parameters. A boolean parameter is written `true` or `false` (OpenAPI's
   * form style); any other text is not a boolean.
   */
  acceptsQuery(method: string, route: string, name: string, value: string): boolean {
    const lower = method.toLowerCase();
    const parameters = this.document.paths[route]?.[lower]?.parameters ?? [];
    const index = parameters.findIndex((parameter) => parameter.in === 'query' && parameter.name === name);
    if (index === -1) return false;
    const typed =
      parameters[index].schema?.type === 'boolean' && (value === 'true' || value === 'false')
        ? value === 'true'
        : value;
    return this.compiled(pointer('paths', route, lower, 'parameters', String(index), 'schema'))(typed);
  }

  private validator(route: string, method: string, status: string, mediaType: string): ValidateFunction {
    return this.compiled(
      pointer('paths', route, method, 'responses', status, 'content', mediaType, 'schema'),
    );
  }

  private compiled(location: string): ValidateFunction {
    const ref = `placard:openapi#/${location}`;
    let validate = this.validators.get(ref);
    if (validate === undefined) {
      validate = this.ajv.compile({ $ref: ref });
      this.validators.set(ref, validate);
    }
    return validate;
  }
}

let committed: Conformance | undefined;

/** A checker for the committed document, built once per test file. */
export function committedConformance(): Conformance {
  committed ??= new Conformance(JSON.parse(fs.readFileSync(DOCUMENT_PATH, 'utf8')) as Document);
  return committed;
}
