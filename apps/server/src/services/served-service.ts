import type { Store } from '../store/store.js';
import { commitServed, UNSERVED, type ServingChanges } from '../serving/serving-changes.js';
import { audit, CLI_ACTOR, type Actor, type Change } from './audit.js';

/** A kind of object changes are audited on: how the actor finds one, and what its audit entry records. */
export interface AuditedObject<T> {
  type: Change['objectType'];
  /** The object, or not found when the actor may not see it. */
  find: (store: Store, id: number) => Promise<T>;
  view: (object: T, now: number) => unknown;
}

/**
 * A service that changes what fetches read (campaigns, placements, partners and keys, a flag's
 * suspension), acting for one actor: what each such service is built with. Built with no serving
 * state to tell (the CLI's, or one called inside another's transaction), it leaves its changes to
 * the instances' poll.
 */
export abstract class ServedService {
  constructor(
    protected readonly store: Store,
    protected readonly actor: Actor = CLI_ACTOR,
    protected readonly clock: () => number = Date.now,
    /** Told after each change fetches read has committed (`serving/serving-changes.ts`). */
    protected readonly serving: ServingChanges = UNSERVED,
  ) {}

  /**
   * Changes object `id` in one transaction with its audit entry, then tells `serving`: `change` is
   * given the object as it was, refuses what the actor may not do, makes the change and returns the
   * object as it is after, with the entry's reason. The entry records `view` of both.
   */
  protected changeAudited<T>(
    object: AuditedObject<T>,
    id: number,
    action: string,
    change: (before: T, tx: Store, now: number) => Promise<{ after: T; reason: string | null }>,
    serving: ServingChanges = this.serving,
  ): Promise<T> {
    const now = this.clock();
    return commitServed(this.store, serving, async (tx) => {
      const before = await object.find(tx, id);
      const { after, reason } = await change(before, tx, now);
      await audit(
        tx,
        this.actor,
        {
          objectType: object.type,
          objectId: id,
          action,
          reason,
          before: object.view(before, now),
          after: object.view(after, now),
        },
        now,
      );
      return after;
    });
  }
}
