import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { mayChange } from '../../domain/accounts.js';
import { DomainError, invalidField, notFound } from '../../domain/errors.js';
import { readMoney } from '../../domain/money.js';
import type { SignedIn } from '../../services/sessions.js';
import type { DashboardDeps } from './context.js';
import { setFlash } from './cookies.js';
import { idOf } from './ids.js';
import { refusal, type RenderPage } from './page-routes.js';
import { AdjustmentsPage } from './pages/adjustments.js';
import { ConfirmPage } from './pages/confirm.js';
import type { Refused } from './pages/layout.js';
import { monthName, OperatorStatementsPage, OwnStatementsPage, StatementPage } from './pages/statements.js';
import { sendPage } from './render.js';
import { attempt, formFields, PAGE, pageContext, requireSignedIn } from './support.js';

/** A month as the forms and addresses carry it. */
const MONTH = /^\d{4}-(0[1-9]|1[0-2])$/;

/**
 * Monthly statements (D18): the operator's months, issuing and adjustments; every account's own
 * statements; one statement with its CSV and, for the operator, its payout. The statement service
 * scopes every read (another account's statement is a 404) and refuses every change but issuing a
 * month, recording an adjustment and recording a payout: no route here changes an issued figure.
 */
export async function statementRoutes(app: FastifyInstance, deps: DashboardDeps): Promise<void> {
  const statements = (signedIn: SignedIn) => deps.services.statements(signedIn.actor);
  const isOperator = (signedIn: SignedIn) => signedIn.user.account.kind === 'operator';
  const operatorChanges = (signedIn: SignedIn) => isOperator(signedIn) && mayChange(signedIn.user.role);
  /**
   * The signed-in person, who must be an admin or manager of the operator to post `what`: anyone
   * else is refused with a page that says so (the service refuses them too).
   */
  const operatorChanging = (request: FastifyRequest, reply: FastifyReply, what: string): SignedIn => {
    const signedIn = requireSignedIn(request, reply)!;
    if (!operatorChanges(signedIn))
      throw new DomainError('forbidden', `${what} are for the operator’s admins and managers`);
    return signedIn;
  };
  /** The currency and the billing time zone the pages show amounts and instants in. */
  const shown = (signedIn: SignedIn) => {
    const { currency, billingTimeZone } = statements(signedIn);
    return { currency, billingTimeZone };
  };
  /** Who issued, paid or recorded, in words, for the operator's people; others read "the operator". */
  const namesOf = async (signedIn: SignedIn, actors: string[]) =>
    isOperator(signedIn) ? deps.services.auditActorNames(signedIn.actor, actors) : new Map<string, string>();

  const statementsPage = async (
    request: FastifyRequest,
    reply: FastifyReply,
    signedIn: SignedIn,
    problem?: string,
  ) => {
    const service = statements(signedIn);
    const page = pageContext(request, reply);
    if (!isOperator(signedIn)) {
      return OwnStatementsPage({
        page,
        ...shown(signedIn),
        kind: signedIn.user.account.kind === 'partner' ? 'partner' : 'advertiser',
        accountName: signedIn.accountName,
        statements: (await service.list({})).sort((a, b) => b.month.localeCompare(a.month)),
      });
    }
    const months = await service.months();
    const issued = months.filter((month) => month.issued).map((month) => month.month);
    const asked = (request.query as Record<string, unknown>)['month'];
    if (typeof asked === 'string' && !issued.includes(asked))
      throw notFound(`no statements are issued for “${asked}”: choose an issued month from the list`);
    const month = typeof asked === 'string' ? asked : issued.sort().at(-1);
    return OperatorStatementsPage({
      page,
      ...shown(signedIn),
      months,
      month,
      statements: month === undefined ? [] : await service.list({ month }),
      canChange: operatorChanges(signedIn),
      problem,
    });
  };

  /** A page at `path` for people signed in, rendered by `render`. */
  const signedInPage = (path: string, render: RenderPage) =>
    app.get(path, PAGE, async (request, reply) => {
      const signedIn = requireSignedIn(request, reply);
      if (!signedIn) return reply;
      return sendPage(reply, await render(request, reply, signedIn));
    });

  signedInPage('/statements', (request, reply, signedIn) => statementsPage(request, reply, signedIn));

  // Asks before issuing: a month's statements never change once issued.
  app.get('/statements/issue', PAGE, async (request, reply) => {
    const signedIn = requireSignedIn(request, reply);
    if (!signedIn) return reply;
    const asked = (request.query as Record<string, unknown>)['month'];
    const month = typeof asked === 'string' ? asked : '';
    if (!MONTH.test(month))
      throw notFound(`“${month}” is not a month: a month is written YYYY-MM, such as 2026-10`);
    return sendPage(
      reply,
      ConfirmPage({
        page: pageContext(request, reply),
        title: `Issue statements for ${monthName(month)}?`,
        current: '/statements',
        consequences: [
          `Every advertiser and partner with money in ${monthName(month)} gets its statement, from the events recorded then.`,
          'Issued statements never change: a correction afterwards is an adjustment, carried on the next statement.',
          'Adjustments recorded until now are carried on these statements.',
        ],
        action: '/statements/issue',
        hidden: { month },
        button: `Issue statements for ${monthName(month)}`,
        busy: 'Issuing the statements…',
        back: { href: '/statements', text: 'Not now: back to the statements' },
      }),
    );
  });

  app.post('/statements/issue', PAGE, async (request, reply) => {
    const signedIn = operatorChanging(request, reply, 'issuing statements');
    const month = formFields(request)['month'] ?? '';
    let count = 0;
    const refused = await attempt(
      reply,
      async () => {
        count = (await statements(signedIn).issue(month)).length;
      },
      (problem) => statementsPage(request, reply, signedIn, `${monthName(month)} was not issued: ${problem}`),
    );
    if (refused) return reply;
    setFlash(
      reply,
      `${monthName(month)} is issued: ${count === 1 ? 'one statement' : `${count} statements`}, listed below`,
    );
    return reply.redirect(`/statements?month=${month}`, 303);
  });

  const statementPage = async (
    request: FastifyRequest,
    reply: FastifyReply,
    signedIn: SignedIn,
    refused?: Refused,
  ) => {
    const id = idOf((request.params as { id?: string }).id, 'statement');
    const statement = await statements(signedIn).get(id);
    const actors = [statement.issuedBy, ...(statement.payment ? [statement.payment.paidBy] : [])];
    return StatementPage({
      page: pageContext(request, reply),
      ...shown(signedIn),
      statement,
      names: await namesOf(signedIn, actors),
      canPay: operatorChanges(signedIn),
      refused,
    });
  };

  signedInPage('/statements/:id', statementPage);

  app.get('/statements/:id.csv', PAGE, async (request, reply) => {
    const signedIn = requireSignedIn(request, reply);
    if (!signedIn) return reply;
    const service = statements(signedIn);
    const id = idOf((request.params as { id?: string }).id, 'statement');
    const statement = await service.get(id);
    const name = `placard-statement-${statement.month}-${statement.kind}-${statement.accountId}.csv`;
    return reply
      .header('content-type', 'text/csv; charset=utf-8')
      .header('content-disposition', `attachment; filename="${name}"`)
      .header('cache-control', 'no-store')
      .send(await service.csv(id));
  });

  app.post('/statements/:id/payment', PAGE, async (request, reply) => {
    const signedIn = operatorChanging(request, reply, 'payouts');
    const id = idOf((request.params as { id?: string }).id, 'statement');
    const reference = formFields(request)['reference'];
    const refused = await attempt(
      reply,
      async () => {
        await statements(signedIn).markPaid(id, { reference });
        setFlash(reply, `the payout is recorded, reference ${reference?.trim()}`);
      },
      (problem, problems) => statementPage(request, reply, signedIn, refusal(request, problem, problems)),
    );
    if (refused) return reply;
    return reply.redirect(`/statements/${id}`, 303);
  });

  const adjustmentsPage = async (
    request: FastifyRequest,
    reply: FastifyReply,
    signedIn: SignedIn,
    refused?: Refused,
  ) => {
    const adjustments = await statements(signedIn).listAdjustments({});
    const [advertisers, partners] = await Promise.all([
      deps.services.advertisers(signedIn.actor).list(),
      deps.services.partners(signedIn.actor).listPartners(),
    ]);
    return AdjustmentsPage({
      page: pageContext(request, reply),
      ...shown(signedIn),
      advertisers: advertisers.map(({ id, name }) => ({ value: `advertiser:${id}`, name })),
      partners: partners.map(({ id, name }) => ({ value: `partner:${id}`, name })),
      adjustments: adjustments.sort((a, b) => b.id - a.id),
      names: await namesOf(
        signedIn,
        adjustments.map((adjustment) => adjustment.createdBy),
      ),
      canChange: operatorChanges(signedIn),
      refused,
    });
  };

  signedInPage('/adjustments', adjustmentsPage);

  app.post('/adjustments', PAGE, async (request, reply) => {
    const signedIn = operatorChanging(request, reply, 'adjustments');
    const fields = formFields(request);
    const refused = await attempt(
      reply,
      async () => {
        // `advertiser:3` or `partner:1`; anything else is left for the service to name as missing.
        const [kind, accountId] = (fields['account'] ?? '').split(':');
        // Read exactly like the budget fields: units of the currency, at most 6 decimals, signed.
        const amount = readMoney(fields['amount'] ?? '', { allowNegative: true });
        if ('problem' in amount) throw invalidField('amount', amount.problem);
        const adjustment = await statements(signedIn).addAdjustment({
          kind: kind || undefined,
          accountId: accountId === undefined ? undefined : Number(accountId),
          amountMicros: amount.micros,
          reason: fields['reason'],
        });
        setFlash(
          reply,
          `adjustment #${adjustment.id} is recorded on ${adjustment.accountName}: it is carried on its next statement`,
        );
      },
      (problem, problems) => adjustmentsPage(request, reply, signedIn, refusal(request, problem, problems)),
    );
    if (refused) return reply;
    return reply.redirect('/adjustments', 303);
  });
}
