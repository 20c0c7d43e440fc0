import { Type } from 'typebox';
import { SUMMARY_MONTHS } from '../../services/money-summary.js';
import { One } from '../openapi/common.js';
import { operation, ref } from '../openapi/management.js';
import type { AdminContext } from './context.js';
import { query, type ManagementApp } from './typed-routes.js';

const summarySchema = {
  ...operation('moneySummary', 'Money', {
    summary: 'Revenue, partner earnings and margin of a month',
    description:
      'The operator’s only. A month of the billing time zone (`PLACARD_BILLING_TIME_ZONE`), this one by default: advertisers’ spend (revenue), what partners earned of it (payouts owed) and the margin, in all, by advertiser and by partner, with the totals of the twelve months up to it. Live, from the same rollups as the reports. See docs/money.md.',
    ok: [200, One(ref('MoneySummary'))],
  }),
  querystring: query(
    Type.Object({
      month: Type.Optional(Type.String({ description: 'YYYY-MM; default: this month.' })),
    }),
  ),
};

/** GET /admin/v1/money/summary: the operator's money by month. */
export async function moneyRoutes(app: ManagementApp, context: AdminContext): Promise<void> {
  app.get('/money/summary', { schema: summarySchema }, async (request) => {
    const money = context.services.moneySummary(context.actor(request));
    const summary = await money.month(request.query.month);
    const months = await money.months(SUMMARY_MONTHS, summary.month);
    const range = { from: new Date(summary.from).toISOString(), to: new Date(summary.to).toISOString() };
    return { status: 'success', data: { ...summary, ...range, months } };
  });
}
