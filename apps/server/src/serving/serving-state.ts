import type { Logger } from 'pino';
import { FIRST_PACE, UNPACED, samePace, type Pace } from '../domain/pacing.js';
import type { Campaign } from '../domain/campaigns.js';
import type { LiveKey, Store } from '../store/store.js';
import { CampaignIndex, CampaignIndexBuilder } from './campaign-index.js';
import { collectGarbage } from './heap.js';
import type { ServingChanges } from './serving-changes.js';

/** Index size from which a rebuild is followed by a full garbage collection (see heap.ts). */
const LARGE_INDEX = 20_000;

/**
 * What every request reads without touching the store: the campaign index and the live API keys,
 * kept up to date from the store's change feed (trigger-maintained versions), so a change made by
 * this process, the CLI, another instance or plain SQL is served within about two refresh
 * intervals. The index is built whole at start; after that the feed's log of changed campaigns
 * (migration 011) names what changed and only those campaigns are read and applied in place, as
 * are the campaigns whose start, end or daily-cap hold comes. A change the log cannot name (a
 * placement, a truncate, an instance too far behind) rebuilds the index whole. Keys are reloaded
 * whole when they change. A change this instance commits is announced through `changed`
 * (`serving-changes.ts`), which checks the feed at once rather than at the next poll.
 */
export class ServingState implements ServingChanges {
  private currentIndex: CampaignIndex = CampaignIndex.from(new Set(), []);
  private keysByDigest = new Map<string, LiveKey>();
  private versions: Record<string, number> = {};
  private timer: NodeJS.Timeout | undefined;
  private refreshing: Promise<void> | undefined;
  /** The check `changed` asked for, until it starts. */
  private announced: Promise<void> | undefined;
  private lastRefreshAt = 0;
  private builds = 0;
  private applied = 0;
  /** Each even campaign's pace (D16) as the last pacing step decided it; the rest are unpaced. */
  private readonly paces = new Map<number, Pace>();
  /** Even campaigns in the index that no pacing step has decided yet: served at `FIRST_PACE`. */
  private readonly undecided = new Set<number>();

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

  /** How many times the index was built whole (at start, and when the feed could not say what changed). */
  get fullBuilds(): number {
    return this.builds;
  }

  /** How many campaign changes were applied to the index in place. */
  get changesApplied(): number {
    return this.applied;
  }

  /** Milliseconds since the last successful check of the change feed. */
  get refreshAgeMs(): number {
    return Date.now() - this.lastRefreshAt;
  }

  /**
   * The pace the index serves a campaign at: the last pacing step's, `FIRST_PACE` for an even
   * campaign no step has decided yet, `UNPACED` when it is not paced.
   */
  paceOf(id: number): Pace {
    return this.paces.get(id) ?? (this.undecided.has(id) ? FIRST_PACE : UNPACED);
  }

  /** The pace to serve `campaign` at as it enters or changes in the index. */
  private servedPace(id: number, campaign: Campaign | undefined): Pace {
    const decided = this.paces.get(id);
    if (decided) return decided;
    if (campaign?.pacing === 'even') {
      this.undecided.add(id);
      return FIRST_PACE;
    }
    this.undecided.delete(id);
    return UNPACED;
  }

  /**
   * Applies new paces (`PacingJob`) to the index in place; `campaigns` are their current rows (a
   * campaign absent from them is applied as gone, as a change would be). `UNPACED` forgets one.
   */
  pace(paces: ReadonlyMap<number, Pace>, campaigns: readonly Campaign[]): void {
    const byId = new Map(campaigns.map((campaign) => [campaign.id, campaign]));
    const at = this.clock();
    for (const [id, pace] of paces) {
      this.undecided.delete(id);
      if (samePace(pace, UNPACED)) this.paces.delete(id);
      else this.paces.set(id, pace);
      this.currentIndex.apply(id, byId.get(id), at, pace);
    }
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

  /** Whether it polls the change feed: from `start` until `stop`. */
  get scheduled(): boolean {
    return this.timer !== undefined;
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

  /**
   * A change this instance just committed: checks the feed now rather than at the next poll. A
   * check already under way may have read the feed before the change committed, so this one
   * starts after it; changes announced meanwhile share it.
   */
  changed(): void {
    this.announced ??= (this.refreshing ?? Promise.resolve())
      .catch(() => undefined) // that check's own caller logs its failure
      .then(() => {
        this.announced = undefined;
        return this.refresh();
      })
      .catch((error: unknown) => this.log.error({ err: error }, 'refreshing the serving index failed'));
  }

  private async checkForChanges(): Promise<void> {
    const versions = await this.store.changeVersions();
    const work: Promise<void>[] = [];
    const seen = this.versions['campaigns'];
    const now = versions['campaigns'];
    if (now !== seen || this.clock() >= this.currentIndex.nextBoundaryAt) {
      work.push(this.updateCampaigns(seen, now));
    }
    if (versions['keys'] !== this.versions['keys']) work.push(this.reloadKeys());
    await Promise.all(work);
    this.versions = versions;
    this.lastRefreshAt = Date.now();
  }

  /**
   * Applies the campaigns changed between two versions of the feed, and those whose boundary came,
   * in place; rebuilds the whole index when the log cannot name every change.
   */
  private async updateCampaigns(seen: number | undefined, now: number | undefined): Promise<void> {
    const changed =
      seen === now
        ? []
        : seen === undefined || now === undefined
          ? null
          : await this.store.campaignChangesBetween(seen, now);
    if (changed === null) return this.reloadCampaigns();
    const index = this.currentIndex;
    const ids = [...new Set([...changed, ...index.dueCampaigns(this.clock())])];
    if (ids.length === 0) return;
    const campaigns = new Map((await this.store.getCampaigns(ids)).map((c) => [c.id, c]));
    // A full build that replaced the index meanwhile already holds these changes.
    if (this.currentIndex !== index) return;
    const at = this.clock();
    for (const id of ids) index.apply(id, campaigns.get(id), at, this.servedPace(id, campaigns.get(id)));
    this.applied += ids.length;
  }

  private async reloadCampaigns(): Promise<void> {
    const started = Date.now();
    const placements = await this.store.listPlacements();
    const enabled = new Set(placements.filter((p) => p.enabled).map((p) => p.id));
    // Page by page, so peak memory is the new index plus one page, not every row at once.
    const builder = new CampaignIndexBuilder(enabled, this.clock());
    this.undecided.clear(); // the build adds again those still running
    for await (const page of this.store.runningCampaignPages()) {
      for (const campaign of page) builder.add(campaign, this.servedPace(campaign.id, campaign));
    }
    this.currentIndex = builder.build();
    this.builds++;
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
