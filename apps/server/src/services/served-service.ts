import type { Store } from '../store/store.js';
import { UNSERVED, type ServingChanges } from '../serving/serving-changes.js';
import { CLI_ACTOR, type Actor } from './audit.js';

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
}
