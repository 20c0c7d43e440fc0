import type { Store } from '../store/store.js';

/**
 * The one way a change this instance commits reaches its own serving index at once. The services
 * that write what fetches read (campaigns, placements, partners and their keys), the key flag job
 * and the group commit's caps call `changed` once their change has committed; `ServingState` alone
 * decides what to check then (the change feed, as its poll does). Other instances, and a process
 * with no serving index (the CLI), learn of the same change from the feed at their next poll.
 */
export interface ServingChanges {
  /** A change to what fetches read has committed. */
  changed(): void;
}

/**
 * Tells no one: for a process with no serving index (the CLI), and for a service called inside
 * another's transaction, whose caller tells once that transaction has committed.
 */
export const UNSERVED: ServingChanges = { changed: () => undefined };

/**
 * Runs `work` in one transaction and, once it has committed, tells `serving`: told earlier, the
 * serving state could read the feed before the change is in it.
 */
export async function commitServed<T>(
  store: Store,
  serving: ServingChanges,
  work: (tx: Store) => Promise<T>,
): Promise<T> {
  const result = await store.transaction(work);
  serving.changed();
  return result;
}
