import type { Logger } from 'pino';
import type { LiveKey, Store } from '../store/store.js';
import { CampaignIndex, CampaignIndexBuilder } from './campaign-index.js';
import { collectGarbage } from './heap.js';

/** Index size from which a rebuild is followed by a full garbage collection (see heap.ts). */
const LARGE_INDEX = 20_000;

/**
 * What every request reads without touching the store: the campaign index and the live API keys.
 * Both are rebuilt whole from the store when its change feed (trigger-maintained versions) moves,
 * so a change made by this process, the CLI, another instance or plain SQL is served within about
 * two refresh intervals. A rebuild is also scheduled for the next campaign start or end time.
 */
export class ServingState {
  private currentIndex: CampaignIndex = CampaignIndex.from(new Set(), []);
  private keysByDigest = new Map<string, LiveKey>();
  private versions: Record<string, number> = {};
  private timer: NodeJS.Timeout | undefined;
  private refreshing: Promise<void> | undefined;
  private lastRefreshAt = 0;

  constructor(
    private readonly store: Store,
    private readonly log: Pick<Logger, 'info' | 'error'>,
    private readonly intervalMs: number,
    private readonly clock: () => number = Date.now,
  ) {}

  get index(): CampaignIndex {
    return this.currentIndex;
  }

  /** The live (active or suspended) key with this digest, or undefined for unknown and revoked keys. */
  key(digest: string): LiveKey | undefined {
    return this.keysByDigest.get(digest);
  }

  /** Milliseconds since the last successful check of the change feed. */
  get refreshAgeMs(): number {
    return Date.now() - this.lastRefreshAt;
  }

  /** Loads everything once; call before serving. */
  async load(): Promise<void> {
    this.versions = await this.store.changeVersions();
    await Promise.all([this.reloadCampaigns(), this.reloadKeys()]);
    this.lastRefreshAt = Date.now();
  }

  /** Starts polling the change feed. */
  start(): void {
    const tick = (): void => {
      this.refresh()
        .catch((error: unknown) => this.log.error({ err: error }, 'refreshing the serving index failed'))
        .finally(() => {
          if (this.timer !== undefined) this.timer = setTimeout(tick, this.intervalMs).unref();
        });
    };
    this.timer = setTimeout(tick, this.intervalMs).unref();
  }

  stop(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Checks the change feed now and reloads what changed; concurrent calls share one check. */
  refresh(): Promise<void> {
    this.refreshing ??= this.checkForChanges().finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  private async checkForChanges(): Promise<void> {
    const versions = await this.store.changeVersions();
    const work: Promise<void>[] = [];
    if (
      versions['campaigns'] !== this.versions['campaigns'] ||
      this.clock() >= this.currentIndex.nextBoundaryAt
    ) {
      work.push(this.reloadCampaigns());
    }
    if (versions['keys'] !== this.versions['keys']) work.push(this.reloadKeys());
    await Promise.all(work);
    this.versions = versions;
    this.lastRefreshAt = Date.now();
  }

  private async reloadCampaigns(): Promise<void> {
    const started = Date.now();
    const placements = await this.store.listPlacements();
    const enabled = new Set(placements.filter((p) => p.enabled).map((p) => p.id));
    // Page by page, so peak memory is the new index plus one page, not every row at once.
    const builder = new CampaignIndexBuilder(enabled, this.clock());
    for await (const page of this.store.runningCampaignPages()) {
      for (const campaign of page) builder.add(campaign);
    }
    this.currentIndex = builder.build();
    // Small indexes leave little garbage; past this size a full collection returns tens of MB.
    if (this.currentIndex.size >= LARGE_INDEX) collectGarbage();
    this.log.info(
      { campaigns: this.currentIndex.size, placements: enabled.size, ms: Date.now() - started },
      'campaign index loaded',
    );
  }

  private async reloadKeys(): Promise<void> {
    const keys = await this.store.loadLiveKeys();
    this.keysByDigest = new Map(keys.map((key) => [key.digest, key]));
  }
}
