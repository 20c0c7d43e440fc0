import { randomBytes } from 'node:crypto';
import type { Display } from '@placard/client';

/** How long a rendered ad can still report its impression and clicks. */
const DISPLAY_TTL_MS = 30 * 60_000;
const MAX_DISPLAYS = 100_000;

/**
 * The displays this server rendered, by an unguessable token put in the page: the browser names a
 * display by its token, and only this server, which holds the API key, reports it to Placard.
 */
export class Displays {
  private readonly byToken = new Map<string, { display: Display; at: number }>();

  constructor(private readonly clock: () => number = Date.now) {}

  add(display: Display): string {
    this.prune();
    const token = randomBytes(16).toString('base64url');
    this.byToken.set(token, { display, at: this.clock() });
    return token;
  }

  get(token: string): Display | undefined {
    const entry = this.byToken.get(token);
    if (entry === undefined || this.clock() - entry.at > DISPLAY_TTL_MS) return undefined;
    return entry.display;
  }

  private prune(): void {
    const cutoff = this.clock() - DISPLAY_TTL_MS;
    for (const [token, entry] of this.byToken) {
      if (entry.at >= cutoff && this.byToken.size < MAX_DISPLAYS) break;
      this.byToken.delete(token);
    }
  }
}
