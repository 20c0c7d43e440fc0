import type { Acknowledgement, Campaign, ErrorBody, FetchResponse } from './generated.js';

/** Shape checks of what the server answered: anything else is never returned as data. */

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function isHttpUrl(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

export function isCampaign(value: unknown): value is Campaign {
  return (
    isObject(value) &&
    Number.isSafeInteger(value['id']) &&
    (value['id'] as number) > 0 &&
    typeof value['title'] === 'string' &&
    (value['description'] === undefined || typeof value['description'] === 'string') &&
    (value['category'] === undefined || typeof value['category'] === 'string') &&
    isHttpUrl(value['destinationUrl']) &&
    value['status'] === 'running' &&
    typeof value['createdAt'] === 'string' &&
    (value['token'] === undefined || typeof value['token'] === 'string')
  );
}

export function isFetchResponse(value: unknown): value is FetchResponse {
  return (
    isObject(value) &&
    value['status'] === 'success' &&
    Array.isArray(value['data']) &&
    value['count'] === value['data'].length &&
    value['data'].every(isCampaign)
  );
}

export function isAcknowledgement(value: unknown): value is Acknowledgement {
  return isObject(value) && value['status'] === 'success' && typeof value['message'] === 'string';
}

export function isErrorBody(value: unknown): value is ErrorBody {
  return isObject(value) && value['status'] === 'error' && typeof value['message'] === 'string';
}
