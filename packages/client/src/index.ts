export {
  PlacardClient,
  VERSION,
  type ClientOptions,
  type FetchOptions,
  type TrackCallOptions,
} from './client.js';
export type { PlacardErrorCode } from './codes.js';
export { Display, type TrackOptions } from './display.js';
// Every error class the client throws, each with its stable `code`.
export * from './errors.js';
export type {
  Acknowledgement,
  Campaign,
  Device,
  ErrorBody,
  FetchResponse,
  TrackingBody,
} from './generated.js';
export { DEFAULT_RETRY, type RetryPolicy } from './retry.js';
export type { FetchArguments, TrackingContext } from './rules.js';
