import { alreadyExists, invalidField, notFound, unprocessable } from '../domain/errors.js';
import { unknownFieldProblems } from '../domain/campaigns.js';
import { isPlacementId } from '../domain/placements.js';
import type { NumberedPage, NumberedPageRequest, Placement } from '../store/store.js';
import { requireOperator } from './scope.js';
import { audit } from './audit.js';
import { commitServed } from '../serving/serving-changes.js';
import { ServedService } from './served-service.js';

function checkDescription(value: unknown): string {
  if (typeof value !== 'string' || value.trim() === '' || value.length > 200) {
    throw invalidField('description', 'must be 1 to 200 characters');
  }
  return value.trim();
}

/**
 * The placement registry (D1). Placements are data: operators describe, disable and add them; a
 * disabled placement is answered like an unknown one on every instance within 2 s.
 */
export class PlacementService extends ServedService {
  list(): Promise<Placement[]> {
    return this.store.listPlacements();
  }

  /**
   * One numbered page of the placements, newest first, with their count: the operator's people see
   * every placement, everyone else the enabled ones (the placements a partner may ask for).
   */
  page(request: NumberedPageRequest): Promise<NumberedPage<Placement>> {
    return this.store.placementPage({ enabledOnly: this.actor.account.kind !== 'operator' }, request);
  }

  async get(id: string): Promise<Placement> {
    const placement = await this.store.getPlacement(id);
    if (!placement) throw notFound(`placement ${id} not found`);
    return placement;
  }

  async add(id: unknown, description: unknown): Promise<Placement> {
    requireOperator(this.actor, 'change the placement registry');
    if (typeof id !== 'string' || !isPlacementId(id)) {
      throw invalidField('id', 'must be a lower-case slug such as "video_preroll" (at most 64 characters)');
    }
    const checked = checkDescription(description);
    const now = this.clock();
    return commitServed(this.store, this.serving, async (tx) => {
      if (await tx.getPlacement(id)) throw alreadyExists(`placement ${id} already exists`);
      await tx.addPlacement({ id, description: checked, enabled: true }, now);
      const placement = (await tx.getPlacement(id))!;
      await audit(
        tx,
        this.actor,
        { objectType: 'placement', objectId: id, action: 'create', before: null, after: placement },
        now,
      );
      return placement;
    });
  }

  async update(id: string, changes: Record<string, unknown>): Promise<Placement> {
    await this.get(id);
    requireOperator(this.actor, 'change the placement registry');
    const unknown = unknownFieldProblems(changes, ['description', 'enabled'], '');
    if (unknown.length > 0) throw unprocessable(`invalid change to placement ${id}`, unknown);
    if (changes['enabled'] !== undefined && typeof changes['enabled'] !== 'boolean')
      throw invalidField('enabled', 'must be true or false');
    const description =
      changes['description'] === undefined ? undefined : checkDescription(changes['description']);
    const enabled = changes['enabled'];
    const now = this.clock();
    return commitServed(this.store, this.serving, async (tx) => {
      const before = await tx.getPlacement(id);
      if (!before) throw notFound(`placement ${id} not found`);
      await tx.updatePlacement(id, {
        ...(description !== undefined && { description }),
        ...(enabled !== undefined && { enabled }),
      });
      const after = (await tx.getPlacement(id))!;
      const action =
        enabled === undefined || enabled === before.enabled ? 'update' : enabled ? 'enable' : 'disable';
      await audit(tx, this.actor, { objectType: 'placement', objectId: id, action, before, after }, now);
      return after;
    });
  }
}
