import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * One partner request and, once decided, its answer: what the partner API's steps pass one
 * another instead of long lists of positional arguments.
 *
 * Why a class: it is made once per request on the product's hot path. Every field is set by the
 * constructor, in one order, so every exchange has the same hidden class and V8 keeps the code
 * that reads them monomorphic. The answer's fields are filled in later on the same object, which
 * then waits in the round's batch itself (`response-batch.ts`), so a request allocates this one
 * object where it used to allocate the answer (docs/benchmarks.md, "One object per partner
 * request").
 */
export class PartnerExchange {
  /** The answer's status; 0 until the request is answered. */
  status = 0;
  body: string | Buffer = '';
  /** Headers of the answer besides the content type, length and request id. */
  headers: Record<string, string> | undefined = undefined;

  constructor(
    readonly request: IncomingMessage,
    readonly response: ServerResponse,
    /** The request id (`X-Request-Id`), sent back and logged. */
    readonly id: string,
    /** The path without its query, which names the operation. */
    readonly path: string,
    /** The query string without its `?`; empty when there is none. */
    readonly query: string,
    /** `performance.now()` when the request arrived, for its duration. */
    readonly started: number,
  ) {}

  /** Fills in the answer, to be written with the round's others. */
  answer(status: number, body: string | Buffer, headers: Record<string, string> | undefined): void {
    this.status = status;
    this.body = body;
    this.headers = headers;
  }
}
