import { Type } from 'typebox';
import { IdParams, One } from '../openapi/common.js';
import { operation, ref } from '../openapi/management.js';
import { callerService, type AdminContext } from './context.js';
import { one, wantsCsv } from './support.js';
import { body, query, type ManagementApp } from './typed-routes.js';

const list = (item: string) => Type.Object({ status: Type.Literal('success'), data: Type.Array(ref(item)) });

const AccountFilter = {
  kind: Type.Optional(Type.Union([Type.Literal('advertiser'), Type.Literal('partner')])),
  accountId: Type.Optional(Type.Integer({ minimum: 1, description: 'The advertiser’s or partner’s id.' })),
};

/** Monthly statements, adjustments and payouts (D18). */
export async function statementRoutes(app: ManagementApp, context: AdminContext): Promise<void> {
  const statements = callerService(context, (services, actor) => services.statements(actor));

  const listMonths = operation('listStatementMonths', 'Statements', {
    summary: 'List the billing months: closed or not, issued or not, and the next to issue',
    description:
      'Every calendar month of the billing time zone (`PLACARD_BILLING_TIME_ZONE`) from the first in which money was recorded through the current one. Months are issued in order: `nextToIssue` marks the one `POST /statements` takes next, once it has closed.',
    ok: [200, list('StatementMonth')],
  });
  app.get('/statement-months', { schema: listMonths }, async (request) => ({
    status: 'success',
    data: await statements(request).months(),
  }));

  const listStatements = {
    ...operation('listStatements', 'Statements', {
      summary: 'List statements',
      description:
        'Oldest month first, without their lines. An advertiser’s or partner’s own tokens read only their own account’s.',
      ok: [200, list('StatementSummary')],
    }),
    querystring: query(
      Type.Object({ ...AccountFilter, month: Type.Optional(Type.String({ description: '`YYYY-MM`.' })) }),
    ),
  };
  app.get('/statements', { schema: listStatements }, async (request) => ({
    status: 'success',
    data: await statements(request).list(request.query),
  }));

  const issueMonth = {
    ...operation('issueStatements', 'Statements', {
      summary: 'Issue the statements of a closed month',
      description:
        'The operator’s only. Issues every advertiser’s and partner’s statement of `month` in one transaction; an account with no money, no adjustment and no balance gets none. 409 when the month has not closed, when an earlier month is not issued yet (the message names it), when it was issued already (`already_done`), or when the month’s raw events and their rollups disagree (raw events removed by retention). An issued statement never changes.',
      ok: [201, list('StatementSummary'), 'Issued.'],
    }),
    body: body(Type.Object({ month: Type.String({ description: '`YYYY-MM` in the billing time zone.' }) })),
  };
  app.post('/statements', { schema: issueMonth }, async (request, reply) =>
    reply.code(201).send({ status: 'success', data: await statements(request).issue(request.body.month) }),
  );

  const getStatement = {
    ...operation('getStatement', 'Statements', {
      summary: 'Get a statement with its lines',
      description:
        'JSON, or CSV with `format=csv` or `Accept: text/csv`. Another account’s statement answers 404, like a missing one.',
      ok: [200, One(ref('Statement'))],
      alsoAs: {
        'text/csv': Type.String({
          description:
            'A header line, one line per statement line, then its totals (`subtotal`, `adjustments`, `openingBalance`, `total`, `payable`, `carriedForward`), each in the `amount` column in units of the `currency` column with its decimals; sent as the attachment `placard-statement-<id>.csv`.',
        }),
      },
    }),
    params: IdParams,
    querystring: query(
      Type.Object({ format: Type.Optional(Type.Union([Type.Literal('json'), Type.Literal('csv')])) }),
    ),
  };
  app.get('/statements/:id', { schema: getStatement }, async (request, reply) => {
    const service = statements(request);
    if (wantsCsv(request.query.format, request.headers.accept))
      return reply
        .type('text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="placard-statement-${request.params.id}.csv"`)
        .send(await service.csv(request.params.id));
    return one(await service.get(request.params.id));
  });

  const markPaid = {
    ...operation('markStatementPaid', 'Statements', {
      summary: 'Mark a partner statement paid',
      description:
        'The operator’s only, once (a second payment answers 409 `already_done`), and only for a partner statement with something payable (409 otherwise).',
      ok: [201, One(ref('StatementSummary')), 'Paid.'],
    }),
    params: IdParams,
    body: body(Type.Object({ reference: Type.String({ description: 'Such as the bank transfer’s id.' }) })),
  };
  app.post('/statements/:id/payment', { schema: markPaid }, async (request, reply) =>
    reply.code(201).send(one(await statements(request).markPaid(request.params.id, request.body))),
  );

  const listAdjustments = {
    ...operation('listAdjustments', 'Statements', {
      summary: 'List adjustments',
      description:
        'Oldest first, each with the statement that carries it (`null` until the account’s next statement). An advertiser’s or partner’s own tokens read only their own.',
      ok: [200, list('Adjustment')],
    }),
    querystring: query(Type.Object(AccountFilter)),
  };
  app.get('/adjustments', { schema: listAdjustments }, async (request) => ({
    status: 'success',
    data: await statements(request).listAdjustments(request.query),
  }));

  const addAdjustment = {
    ...operation('addAdjustment', 'Statements', {
      summary: 'Record an adjustment on an advertiser or a partner',
      description:
        'The operator’s only; audited. A signed amount in micros (negative credits the account) with its reason, carried once, on the account’s next statement issued. Adjustments are never changed or removed: correct one with another.',
      ok: [201, One(ref('Adjustment')), 'Recorded.'],
    }),
    body: body(
      Type.Object({
        kind: Type.Union([Type.Literal('advertiser'), Type.Literal('partner')]),
        accountId: Type.Integer({ minimum: 1 }),
        amountMicros: Type.Integer({ description: 'Signed, not 0.' }),
        reason: Type.String({ description: '1 to 500 characters.' }),
      }),
    ),
  };
  app.post('/adjustments', { schema: addAdjustment }, async (request, reply) =>
    reply.code(201).send(one(await statements(request).addAdjustment(request.body))),
  );
}
