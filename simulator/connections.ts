// Business connections: seeded supplier and buyer links, plus those created by accepted invitations.
import { withServerKeys } from './custom-data.ts';
import { forbidden, notFound } from './http-errors.ts';
import type { Layout } from './layout.ts';
import { uuidFor } from './rng.ts';

export interface Connection {
  id: string;
  sourceIndex: number;
  targetIndex: number;
  createdAt: string;
  updatedAt: string;
  customData: Record<string, unknown>;
}

export const CALLER = 0;

export class ConnectionStore {
  private connections = new Map<string, Connection>();
  private counter = 0;

  constructor(
    private seed: number,
    private layout: Layout,
  ) {
    this.reset();
  }

  reset(): void {
    this.connections.clear();
    const at = (i: number): string => new Date(Date.UTC(2023, 6, 1 + i)).toISOString();
    // Supplier links: the supplier is the source (shares data), the caller the target (buyer).
    this.layout.supplierIndices.forEach((s, i) => {
      const id = uuidFor(this.seed, 'connection', s);
      this.connections.set(id, {
        id,
        sourceIndex: s,
        targetIndex: CALLER,
        createdAt: at(i),
        updatedAt: at(i),
        customData: i % 2 === 0 ? { supplierCode: `S-${String(i + 1).padStart(3, '0')}` } : {},
      });
    });
    this.layout.buyerIndices.forEach((b, i) => {
      const id = uuidFor(this.seed, 'connection', b);
      this.connections.set(id, {
        id,
        sourceIndex: CALLER,
        targetIndex: b,
        createdAt: at(20 + i),
        updatedAt: at(20 + i),
        customData: { buyerRef: `B-${i + 1}` },
      });
    });
  }

  /** Connections where the caller is the buyer: the direct supplier is the other side. */
  suppliers(): Connection[] {
    return [...this.connections.values()].filter((c) => c.targetIndex === CALLER);
  }

  buyers(): Connection[] {
    return [...this.connections.values()].filter((c) => c.sourceIndex === CALLER);
  }

  /** Business indices of the caller's current direct suppliers. */
  supplierIndices(): Set<number> {
    return new Set(this.suppliers().map((c) => c.sourceIndex));
  }

  between(a: number, b: number): Connection | undefined {
    return [...this.connections.values()].find(
      (c) => (c.sourceIndex === a && c.targetIndex === b) || (c.sourceIndex === b && c.targetIndex === a),
    );
  }

  add(sourceIndex: number, targetIndex: number, customData: Record<string, unknown> = {}): Connection {
    const now = new Date().toISOString();
    const id = uuidFor(this.seed, 'connection-new', this.counter++);
    const c: Connection = { id, sourceIndex, targetIndex, createdAt: now, updatedAt: now, customData };
    this.connections.set(id, c);
    return c;
  }

  /** Only the buyer side (target) may set customData; server-owned keys already stored are kept. */
  setCustomData(id: string, customData: Record<string, unknown>): Connection {
    const c = this.connections.get(id);
    if (!c || (c.sourceIndex !== CALLER && c.targetIndex !== CALLER)) throw notFound(`Business connection ${id}`);
    if (c.targetIndex !== CALLER)
      throw forbidden('Only the buyer side of a business connection may set its customData');
    c.customData = withServerKeys(c.customData, customData);
    c.updatedAt = new Date().toISOString();
    return c;
  }

  /** Removes the caller's link to a supplier; returns whether one existed. */
  disconnectSupplier(supplierIndex: number): boolean {
    let removed = false;
    for (const c of this.suppliers()) {
      if (c.sourceIndex === supplierIndex) {
        this.connections.delete(c.id);
        removed = true;
      }
    }
    return removed;
  }
}
