// The password rule (D13): at least 12 characters and not a commonly used password.
import { dictionary } from '@zxcvbn-ts/language-common';
import { invalidField } from './errors.js';

export const MIN_PASSWORD_LENGTH = 12;
/** argon2 takes any length; a bound keeps one request from hashing megabytes. */
export const MAX_PASSWORD_LENGTH = 256;

/**
 * The common-password list zxcvbn-ts maintains (about 49,000 passwords seen in breaches), so the
 * list is kept up to date by people who study them rather than by us.
 */
const COMMON = new Set(dictionary['passwords-common']);

/** The password, or a field error saying what is wrong with it (never echoing it). */
export function checkNewPassword(value: unknown, field = 'password'): string {
  if (typeof value !== 'string' || [...value].length < MIN_PASSWORD_LENGTH) {
    throw invalidField(field, `must be at least ${MIN_PASSWORD_LENGTH} characters`);
  }
  if (value.length > MAX_PASSWORD_LENGTH) {
    throw invalidField(field, `must be at most ${MAX_PASSWORD_LENGTH} characters`);
  }
  if (COMMON.has(value.toLowerCase())) {
    throw invalidField(field, 'is a commonly used password; choose another');
  }
  return value;
}
