import type { FastifyRequest } from 'fastify';
import type { NumberedPage, NumberedPageRequest } from '../../store/store.js';
import type { Paging } from './pages/parts.js';

/** Rows in one page of every list in the dashboard. */
export const LIST_PAGE_SIZE = 50;

/**
 * The numbered page a list's request asks for (`?page=2`; anything but a page number is the
 * first), as the store reads it: every list in the dashboard pages this way, newest first. A
 * page with a second list pages it with a parameter of its own (`param`), so each list keeps its
 * page while the other is paged.
 */
export function pageAsked(request: FastifyRequest, param = 'page'): NumberedPageRequest & { number: number } {
  const raw = (request.query as Record<string, unknown>)[param];
  const number = typeof raw === 'string' && /^[1-9]\d{0,8}$/.test(raw) ? Number(raw) : 1;
  return { number, offset: (number - 1) * LIST_PAGE_SIZE, size: LIST_PAGE_SIZE };
}

/**
 * What the list's pager shows for the page read: which rows of how many, and links to the first,
 * previous, next and last pages of the list at `path`, each with the request's query and its
 * `page` (or `param`) changed (so a filter such as `?status=`, or another list's page, is kept; a
 * form refused on another path shows the list with links to the list's own). Plain links: paging
 * works without scripts.
 */
export function pagingOf(
  request: FastifyRequest,
  path: string,
  asked: { number: number; offset: number; size: number },
  page: NumberedPage<unknown>,
  param = 'page',
): Paging {
  const last = Math.max(1, Math.ceil(page.total / asked.size));
  const query = new URL(request.url, 'http://dashboard').search;
  const href = (number: number): string => {
    const url = new URL(`${path}${query}`, 'http://dashboard');
    if (number === 1) url.searchParams.delete(param);
    else url.searchParams.set(param, String(number));
    return `${url.pathname}${url.search}`;
  };
  return {
    from: page.rows.length === 0 ? 0 : asked.offset + 1,
    to: asked.offset + page.rows.length,
    total: page.total,
    number: asked.number,
    last,
    ...(asked.number > 1 && { first: href(1), previous: href(Math.min(asked.number - 1, last)) }),
    ...(asked.number < last && { next: href(asked.number + 1), lastHref: href(last) }),
  };
}
