import { createHmac, createSecretKey, type KeyObject } from 'node:crypto';

/** The bytes of a viewer's key kept: 128 bits, so two viewers of a partner never share one. */
const VIEWER_KEY_BYTES = 16;

/**
 * What Placard keeps of a partner's `viewer` value (D20): a keyed hash per partner, never the value.
 * Each partner has its own key, derived from the deployment's secret, so the same value sent by two
 * partners gives two unrelated keys (their users never join), and nobody without the secret can
 * tell which value a key came from, even by trying likely ones (e-mail addresses, account numbers).
 * The secret is the one serve tokens are signed with, the same on every instance, so a cluster
 * agrees on a viewer's key; replacing it starts every viewer's count afresh.
 */
export class ViewerKeys {
  /** Each partner's key as a key object, made once: `createHmac` would import raw bytes on every call. */
  private readonly partnerKeys = new Map<number, KeyObject>();

  constructor(private readonly secret: Buffer) {}

  /** The viewer's key for this partner, as 22 base64url characters. */
  of(partnerId: number, viewer: string): string {
    return createHmac('sha256', this.partnerKey(partnerId))
      .update(viewer, 'utf8')
      .digest()
      .subarray(0, VIEWER_KEY_BYTES)
      .toString('base64url');
  }

  private partnerKey(partnerId: number): KeyObject {
    let key = this.partnerKeys.get(partnerId);
    if (key === undefined) {
      key = createSecretKey(
        createHmac('sha256', this.secret).update(`placard viewer key for partner ${partnerId}`).digest(),
      );
      this.partnerKeys.set(partnerId, key);
    }
    return key;
  }
}
