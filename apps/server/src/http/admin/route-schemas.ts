import {
  Type,
  type Static,
  type TIntersect,
  type TObject,
  type TProperties,
  type TSchema,
  type TUnsafe,
} from 'typebox';
import { IdParams, One, Page, PageQuery } from '../openapi/common.js';
import { operation } from '../openapi/management.js';
import { body, query, type AsSent } from './typed-routes.js';

/** What the document says of a route, and the JSON body it takes where it takes one. */
export interface RouteDoc<Body extends TSchema> {
  summary: string;
  description?: string;
  /** The body's fields (`body` in typed-routes.ts: no others). */
  body?: Body;
}

/** The `body` part of a route schema whose doc names one; none otherwise. */
type BodyPart<Body extends TSchema> = [Body] extends [never]
  ? unknown
  : { body: TUnsafe<AsSent<Static<Body>>> };

/** A route schema with the `body` its doc names, if it names one. */
function withBody<Schema extends object, Body extends TSchema>(schema: Schema, doc: RouteDoc<Body>) {
  return (doc.body === undefined ? schema : { ...schema, body: body(doc.body) }) as Schema & BodyPart<Body>;
}

/**
 * The route schemas of one kind of record by the shape of their request: a page of them, a new
 * one, one by its id, or the only one there is. Each is the `operation` of its id under `tag`,
 * answering `item` (one, or a page of them) in the management envelope, with the request parts of
 * its shape. A record is named in a path by its numeric id unless `params` says otherwise (a
 * placement by its slug).
 */
export function recordSchemas<Params extends TSchema = typeof IdParams>(
  tag: string,
  item: TSchema,
  params: Params = IdParams as TSchema as Params,
) {
  const words = ({ summary, description }: RouteDoc<TSchema>) => ({ summary, description });
  return {
    /** A page of them: `limit` and `cursor`, and beside them the filters `filters` names, if any. */
    page<Filters extends TProperties = Record<never, never>>(
      operationId: string,
      doc: RouteDoc<never> & { filters?: Filters },
    ) {
      const parameters =
        doc.filters === undefined ? PageQuery : Type.Intersect([PageQuery, Type.Object(doc.filters)]);
      return {
        ...operation(operationId, tag, { ...words(doc), ok: [200, Page(item)] }),
        querystring: query(parameters as TIntersect<[typeof PageQuery, TObject<Filters>]>),
      };
    },

    /** A new one, from its body: answered with 201. */
    created<Body extends TSchema>(operationId: string, doc: RouteDoc<Body> & { body: Body }) {
      return withBody(operation(operationId, tag, { ...words(doc), ok: [201, One(item), 'Created.'] }), doc);
    },

    /** The only one there is (the flag policy): no id in its path. */
    single<Body extends TSchema = never>(operationId: string, doc: RouteDoc<Body>) {
      return withBody(operation(operationId, tag, { ...words(doc), ok: [200, One(item)] }), doc);
    },

    /** One of them, by the id in its path (`/partners/:id`, `/keys/:id/revoke`), answered as it is after. */
    byId<Body extends TSchema = never>(operationId: string, doc: RouteDoc<Body>) {
      const schema = operation(operationId, tag, { ...words(doc), ok: [200, One(item)] });
      return withBody({ ...schema, params }, doc);
    },
  };
}
