// The password rule (D13): at least 12 characters, not a commonly used password, not a pattern of
// repeated or consecutive characters, and not built on the person's e-mail address or the product's name.
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

/** The product's name: the first word many people try on a site, so it counts for nothing in a password. */
const PRODUCT_NAME = 'placard';
/** A password needs at least this many different characters. */
const MIN_DIFFERENT_CHARACTERS = 5;
/** Parts of an e-mail address shorter than this (`jo`, `uk`) may well appear in a good password by chance. */
const MIN_NAME_PART = 3;

/**
 * Characters a password must have besides the e-mail address, its names and the product's name:
 * two thirds of the minimum length, so a short password that happens to contain a short name
 * (`ann` in `planned-route`) is still taken, while `Placard12345` or `ann.lee2024!` is not.
 */
const MIN_OWN_CHARACTERS = 8;

const ADVICE = 'choose a few unrelated words instead';

/**
 * Whether `text` is made wholly of runs of 3 or more characters that repeat (`aaaa`) or count up or
 * down by one (`abcd`, `4321`), such as `aaaaaaaaaaaa`, `abcdefghijkl` or `123456789012`.
 */
function isRuns(text: string): boolean {
  const codes = [...text].map((character) => character.codePointAt(0) as number);
  let start = 0;
  while (start < codes.length) {
    const step = (codes[start + 1] ?? Infinity) - (codes[start] as number);
    if (Math.abs(step) > 1) return false;
    let end = start + 1;
    while (end < codes.length && (codes[end] as number) - (codes[end - 1] as number) === step) end++;
    if (end - start < 3) return false;
    start = end;
  }
  return true;
}

/** What a password must not be built on: the e-mail address, its parts (names, the domain's words). */
function personalWords(email: string): string[] {
  const address = email.trim().toLowerCase();
  const parts = address.split(/[^\p{L}\p{N}]+/u).filter((part) => part.length >= MIN_NAME_PART);
  return [address, address.split('@')[0] ?? '', ...parts].filter((word) => word.length >= MIN_NAME_PART);
}

/** `text` with every occurrence of `words` taken out, longest words first. */
function without(text: string, words: readonly string[]): string {
  let rest = text;
  for (const word of [...words].sort((a, b) => b.length - a.length)) rest = rest.split(word).join('');
  return rest;
}

/**
 * The password, or a field error saying in plain words what is wrong with it (never echoing it).
 * `email` is the address of the person choosing it: a password that is mostly that address, the
 * names in it or the product's name is refused, since a guesser tries those first: what is left
 * once they are taken out must have `MIN_OWN_CHARACTERS`, so a longer password may contain them.
 */
export function checkNewPassword(value: unknown, field = 'password', email?: string): string {
  if (typeof value !== 'string' || [...value].length < MIN_PASSWORD_LENGTH) {
    throw invalidField(field, `must be at least ${MIN_PASSWORD_LENGTH} characters`);
  }
  if (value.length > MAX_PASSWORD_LENGTH) {
    throw invalidField(field, `must be at most ${MAX_PASSWORD_LENGTH} characters`);
  }
  const lower = value.toLowerCase();
  if (COMMON.has(lower)) {
    throw invalidField(field, 'is a commonly used password; choose another');
  }
  if (isRuns(lower)) {
    throw invalidField(
      field,
      `is made of repeated or consecutive characters (like aaaa, abcd or 4321); ${ADVICE}`,
    );
  }
  if (new Set(lower).size < MIN_DIFFERENT_CHARACTERS) {
    throw invalidField(field, `uses fewer than ${MIN_DIFFERENT_CHARACTERS} different characters; ${ADVICE}`);
  }
  const short = (rest: string) => [...rest].length < MIN_OWN_CHARACTERS;
  if (email !== undefined && short(without(lower, personalWords(email)))) {
    throw invalidField(field, `is mostly your e-mail address or the names in it; ${ADVICE}`);
  }
  if (short(without(lower, [PRODUCT_NAME]))) {
    throw invalidField(field, `is mostly the name Placard; ${ADVICE}`);
  }
  return value;
}
