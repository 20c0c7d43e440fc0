import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, SETTINGS } from './config.js';

describe('configuration', () => {
  it('has defaults for everything', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      host: '127.0.0.1',
      port: 8080,
      logLevel: 'info',
      refreshIntervalMs: 500,
      accessLog: false,
    });
    expect(config.databaseUrl).toBe(`sqlite:${path.resolve('data', 'placard.db')}`);
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('gives out links on the address the server listens on and prints, unless told another', () => {
    // One origin: a link on localhost opened after signing in on 127.0.0.1 finds no session cookie.
    expect(loadConfig({}).publicUrl).toBe('http://127.0.0.1:8080');
    expect(loadConfig({ PLACARD_PORT: '9090' }).publicUrl).toBe('http://127.0.0.1:9090');
    expect(loadConfig({ PLACARD_PUBLIC_URL: 'https://ads.example.com' }).publicUrl).toBe(
      'https://ads.example.com',
    );
  });

  it('judges keys for flags every 30 seconds unless told otherwise (D15)', () => {
    expect(loadConfig({}).flagIntervalMs).toBe(30_000);
    expect(loadConfig({ PLACARD_FLAG_INTERVAL_MS: '5000' }).flagIntervalMs).toBe(5_000);
  });

  it('trusts no proxy unless told, and takes addresses and CIDR ranges', () => {
    expect(loadConfig({}).trustedProxies).toEqual([]);
    expect(loadConfig({ PLACARD_TRUSTED_PROXIES: '10.0.0.5, 10.1.0.0/16,::1' }).trustedProxies).toEqual([
      '10.0.0.5',
      '10.1.0.0/16',
      '::1',
    ]);
    expect(() => loadConfig({ PLACARD_TRUSTED_PROXIES: '10.0.0.5,proxy.example' })).toThrow(
      'PLACARD_TRUSTED_PROXIES must list addresses or CIDR ranges separated by commas (got "proxy.example")',
    );
  });

  it('counts money in US dollars unless given another ISO 4217 currency', () => {
    expect(loadConfig({}).currency).toBe('USD');
    expect(loadConfig({ PLACARD_CURRENCY: 'JPY' }).currency).toBe('JPY');
    expect(loadConfig({ PLACARD_CURRENCY: 'BHD' }).currency).toBe('BHD');
  });

  it('dates billing in UTC unless given another IANA time zone', () => {
    expect(loadConfig({}).billingTimeZone).toBe('UTC');
    expect(loadConfig({ PLACARD_BILLING_TIME_ZONE: 'Europe/Paris' }).billingTimeZone).toBe('Europe/Paris');
  });

  it('leaves earlier admin tokens valid unless told to revoke them', () => {
    expect(loadConfig({}).revokePreviousAdminTokens).toBe(false);
    expect(loadConfig({ PLACARD_REVOKE_PREVIOUS_ADMIN_TOKENS: 'true' }).revokePreviousAdminTokens).toBe(true);
  });

  it('derives the SQLite file from the data directory and accepts PostgreSQL URLs', () => {
    expect(loadConfig({ PLACARD_DATA_DIR: '/srv/placard' }).databaseUrl).toBe(
      'sqlite:/srv/placard/placard.db',
    );
    expect(loadConfig({ PLACARD_DATABASE_URL: 'postgres://u@h:5432/d' }).databaseUrl).toBe(
      'postgres://u@h:5432/d',
    );
  });

  it.each([
    ['PLACARD_PORT', '80a', 'PLACARD_PORT must be an integer between 0 and 65535 (got "80a")'],
    ['PLACARD_PORT', '70000', 'PLACARD_PORT must be an integer between 0 and 65535 (got "70000")'],
    [
      'PLACARD_LOG_LEVEL',
      'loud',
      'PLACARD_LOG_LEVEL must be one of: fatal, error, warn, info, debug, trace, silent',
    ],
    [
      'PLACARD_DATABASE_URL',
      'mysql://x',
      'PLACARD_DATABASE_URL must start with postgres://, postgresql:// or sqlite:',
    ],
    ['PLACARD_ACCESS_LOG', 'maybe', 'PLACARD_ACCESS_LOG must be true or false (got "maybe")'],
    [
      'PLACARD_REFRESH_INTERVAL_MS',
      '10',
      'PLACARD_REFRESH_INTERVAL_MS must be an integer between 50 and 60000',
    ],
    [
      'PLACARD_REDIS_KEY_PREFIX',
      'my app:',
      'PLACARD_REDIS_KEY_PREFIX must be 1 to 64 visible ASCII characters',
    ],
    ['PLACARD_TOKEN_SECRET', 'too short', 'PLACARD_TOKEN_SECRET must be 32 to 1024 visible ASCII characters'],
    [
      'PLACARD_FLAG_INTERVAL_MS',
      '999',
      'PLACARD_FLAG_INTERVAL_MS must be an integer between 1000 and 3600000',
    ],
    [
      'PLACARD_FLAG_INTERVAL_MS',
      '5s',
      'PLACARD_FLAG_INTERVAL_MS must be an integer between 1000 and 3600000',
    ],
    [
      'PLACARD_CURRENCY',
      'usd',
      'PLACARD_CURRENCY must be an ISO 4217 currency code of three capital letters, such as USD, EUR or JPY (got "usd")',
    ],
    [
      'PLACARD_CURRENCY',
      'XYZ',
      'PLACARD_CURRENCY must be an ISO 4217 currency code of three capital letters, such as USD, EUR or JPY (got "XYZ")',
    ],
    [
      'PLACARD_CURRENCY',
      '€',
      'PLACARD_CURRENCY must be an ISO 4217 currency code of three capital letters, such as USD, EUR or JPY (got "€")',
    ],
    [
      'PLACARD_BILLING_TIME_ZONE',
      'Mars/Olympus',
      'PLACARD_BILLING_TIME_ZONE must be an IANA time zone such as UTC or Europe/Paris (got "Mars/Olympus")',
    ],
    [
      'PLACARD_BILLING_TIME_ZONE',
      '+02:00',
      'PLACARD_BILLING_TIME_ZONE must be an IANA time zone such as UTC or Europe/Paris (got "+02:00")',
    ],
  ])('refuses %s=%s with a message naming it', (name, value, message) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(message);
  });

  it('is documented in docs/configuration.md: every variable, in order, with its default', () => {
    const guide = fs.readFileSync(
      path.resolve(import.meta.dirname, '../../../docs/configuration.md'),
      'utf8',
    );
    const documented = [...guide.matchAll(/^## `(PLACARD_[A-Z_]+)`\n\nDefault: `?([^`\n]*?)`?\.$/gm)].map(
      ([, env, def]) => [env, def],
    );
    expect(documented).toEqual(SETTINGS.map((setting) => [setting.env, setting.defaultText]));
  });
});
