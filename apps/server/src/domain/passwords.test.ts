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

  it('refuses repeated or consecutive characters, and too few different ones, saying so', () => {
    for (const pattern of [
      ' '.repeat(12),
      'aaaaaaaaaaaa',
      'abcdefghijkl',
      'lkjihgfedcba',
      '234567890123',
      'aaabbbcccddd',
    ])
      expect(() => checkNewPassword(pattern), JSON.stringify(pattern)).toThrow(
        'password is made of repeated or consecutive characters (like aaaa, abcd or 4321); choose a few unrelated words instead',
      );
    expect(() => checkNewPassword('abababababab')).toThrow(
      'password uses fewer than 5 different characters; choose a few unrelated words instead',
    );
  });

  it('refuses a password that is mostly the person’s e-mail address, its names or the product’s name', () => {
    const email = 'ann.lee@example.com';
    for (const password of [
      'ann.lee@example.com',
      'Ann.Lee2024!',
      'annlee-1990-x',
      'example-2024!',
      'lee-ann-ann-lee',
    ])
      expect(() => checkNewPassword(password, 'password', email), password).toThrow(
        'password is mostly your e-mail address or the names in it; choose a few unrelated words instead',
      );
    expect(() => checkNewPassword('Placard12345', 'newPassword')).toThrow(
      'newPassword is mostly the name Placard; choose a few unrelated words instead',
    );
    // What is left besides them is enough: a short name inside a password is not the password.
    expect(checkNewPassword('planned-route', 'password', email)).toBe('planned-route');
    expect(checkNewPassword('violet-harbour-lantern-placard', 'password', email)).toBe(
      'violet-harbour-lantern-placard',
    );
  });
});
