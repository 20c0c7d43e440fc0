import { describe, expect, it } from 'vitest';
import { checkNewPassword } from './passwords.js';

describe('checkNewPassword', () => {
  it('takes a long uncommon password', () => {
    expect(checkNewPassword('violet-harbour-lantern')).toBe('violet-harbour-lantern');
  });

  it('refuses a short one, naming the rule', () => {
    expect(() => checkNewPassword('short-pass1')).toThrow('password must be at least 12 characters');
  });

  it('refuses a common password of any case', () => {
    expect(() => checkNewPassword('1q2w3e4r5t6y')).toThrow('is a commonly used password');
    expect(() => checkNewPassword('1Q2W3E4R5T6Y')).toThrow('is a commonly used password');
  });

  it('refuses what is not text', () => {
    expect(() => checkNewPassword(123456789012)).toThrow('password must be at least 12 characters');
  });
});
