import { beforeAll, describe, expect, it } from 'vitest';
import { generateAdminToken } from '../src/domain/api-keys.js';
import { tempDir } from './helpers/engines.js';
import { ensureBuilt, startServerProcess } from './helpers/process.js';

/**
 * Changing PLACARD_ADMIN_TOKEN in the built server: the start with the new token logs that the old
 * one is still valid and how to revoke it; a start with PLACARD_REVOKE_PREVIOUS_ADMIN_TOKENS revokes it.
 */
describe('rotating PLACARD_ADMIN_TOKEN', () => {
  // Building is a set-up's work, under the hooks' timeout, not a test's.
  beforeAll(() => ensureBuilt());

  it('warns that the old token is still valid, and revokes it when asked', async () => {
    const dataDir = tempDir();
    const [first, second] = [generateAdminToken().plaintext, generateAdminToken().plaintext];
    const partners = (url: string, token: string) =>
      fetch(`${url}/admin/v1/partners`, { headers: { authorization: `Bearer ${token}` } }).then(
        (a) => a.status,
      );

    const before = await startServerProcess({ PLACARD_DATA_DIR: dataDir, PLACARD_ADMIN_TOKEN: first });
    await before.stop();

    const changed = await startServerProcess({ PLACARD_DATA_DIR: dataDir, PLACARD_ADMIN_TOKEN: second });
    try {
      const warning = changed.output.find((line) => line.includes('which an earlier PLACARD_ADMIN_TOKEN'));
      expect(warning, changed.output.join('\n')).toBeDefined();
      const logged = JSON.parse(warning!) as { level: number; msg: string; adminToken: number };
      expect(logged.level).toBe(40);
      expect(logged.msg).toContain(`${first.slice(0, 10)}…`);
      expect(logged.msg).toContain(`revoke it with "placard tokens revoke ${logged.adminToken}"`);
      expect(await partners(changed.url, first)).toBe(200);
    } finally {
      await changed.stop();
    }

    const revoking = await startServerProcess({
      PLACARD_DATA_DIR: dataDir,
      PLACARD_ADMIN_TOKEN: second,
      PLACARD_REVOKE_PREVIOUS_ADMIN_TOKENS: 'true',
    });
    try {
      expect(revoking.output.some((line) => line.includes('revoked admin token'))).toBe(true);
      expect(await partners(revoking.url, first)).toBe(401);
      expect(await partners(revoking.url, second)).toBe(200);
    } finally {
      await revoking.stop();
    }
  }, 120_000);
});
