import { invalidField } from '../domain/errors.js';

/**
 * A required text field of a management request (a name, a label): 1 to `max` characters once
 * trimmed, returned trimmed; anything else is a 422 naming `field`.
 */
export function trimmedText(field: string, value: unknown, max = 100): string {
  if (typeof value !== 'string' || value.trim() === '' || value.trim().length > max) {
    throw invalidField(field, `must be 1 to ${max} characters`);
  }
  return value.trim();
}
