// Transactions and their components, and the background clock that moves a submitted
// transaction TO_SUBMIT → SUBMITTED → AVAILABLE | ERROR with scaled, deterministic delays.
import { conflict, notFound } from './http-errors.ts';
import { codeFor, unit, uuidFor } from './rng.ts';
import type { Timers } from './timers.ts';
import type { ComponentInput, TransactionInput } from './transaction-input.ts';

export type DelayRange = number | [number, number];
export interface TransactionDelays {
  /** TO_SUBMIT → SUBMITTED, simulated ms (default 30 s–5 min). */
  toSubmittedMs?: DelayRange;
  /** SUBMITTED → AVAILABLE | ERROR, simulated ms (default 20–90 min). */
  validationMs?: DelayRange;
}

export interface Component extends ComponentInput {
  id: string;
  transactionId: string;
  createdAt: string;
  updatedAt: string;
}

export interface Transaction {
  id: string;
  customId: string;
  status: string;
  activityType: string;
  countryOfActivity: string;
  legalEntityId: string;
  isGeoLocationConfidential: boolean;
  customData: Record<string, unknown>;
  referenceNumber: string | null;
  verificationNumber: string | null;
  errorReason: string | null;
  createdAt: string;
  updatedAt: string;
  submittedAt: string | null;
  components: Component[];
}

export interface TransactionDeps {
  seed: number;
  timers: Timers;
  defaultLegalEntityId: string;
  errorRatio: () => number;
  delays: TransactionDelays;
  onStatusChange: (tx: Transaction) => void;
}

const ERROR_REASONS = [
  'EU information system rejected the statement: geolocation of plot overlaps a protected area',
  'EU information system rejected the statement: HS code not covered by Regulation (EU) 2023/1115',
  'EU information system rejected the statement: referenced DDS not found or verification number mismatch',
];

function pickDelay(range: DelayRange, u: number): number {
  return typeof range === 'number' ? range : range[0] + u * (range[1] - range[0]);
}

export class TransactionStore {
  private byId = new Map<string, Transaction>();
  private components = new Map<string, Component>();
  private counter = 0;

  constructor(private deps: TransactionDeps) {}

  list(): Transaction[] {
    return [...this.byId.values()];
  }

  get(id: string): Transaction {
    const tx = this.byId.get(id);
    if (!tx) throw notFound(`Transaction ${id}`);
    return tx;
  }

  countByCustomId(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const tx of this.byId.values()) counts.set(tx.customId, (counts.get(tx.customId) ?? 0) + 1);
    return counts;
  }

  private newComponent(txId: string, input: ComponentInput): Component {
    const now = new Date().toISOString();
    const c: Component = {
      ...input,
      id: uuidFor(this.deps.seed, 'component', this.counter++),
      transactionId: txId,
      createdAt: now,
      updatedAt: now,
    };
    this.components.set(c.id, c);
    return c;
  }

  create(input: TransactionInput): Transaction {
    const n = this.counter++;
    const id = uuidFor(this.deps.seed, 'transaction', n);
    const now = new Date().toISOString();
    const tx: Transaction = {
      id,
      customId: input.customId ?? uuidFor(this.deps.seed, 'custom-id', n),
      status: 'DRAFT',
      activityType: input.activityType ?? 'IMPORT',
      countryOfActivity: input.countryOfActivity ?? '',
      legalEntityId: input.legalEntityId ?? this.deps.defaultLegalEntityId,
      isGeoLocationConfidential: input.isGeoLocationConfidential ?? false,
      customData: input.customData ?? {},
      referenceNumber: null,
      verificationNumber: null,
      errorReason: null,
      createdAt: now,
      updatedAt: now,
      submittedAt: null,
      components: [],
    };
    tx.components = (input.components ?? []).map((c) => this.newComponent(id, c));
    this.byId.set(id, tx);
    return tx;
  }

  /** Rule 2 of the contract: after submission, modifications are refused with 409. */
  private draft(id: string): Transaction {
    const tx = this.get(id);
    if (tx.status !== 'DRAFT')
      throw conflict(`Transaction ${id} is in status ${tx.status}; only DRAFT transactions can be modified`);
    return tx;
  }

  update(id: string, patch: TransactionInput): Transaction {
    const tx = this.draft(id);
    const { components: _ignored, ...fields } = patch;
    Object.assign(tx, fields, { updatedAt: new Date().toISOString() });
    return tx;
  }

  remove(id: string): void {
    const tx = this.draft(id);
    for (const c of tx.components) this.components.delete(c.id);
    this.byId.delete(id);
  }

  addComponent(txId: string, input: ComponentInput): Component {
    const tx = this.draft(txId);
    const c = this.newComponent(txId, input);
    tx.components.push(c);
    tx.updatedAt = c.createdAt;
    return c;
  }

  private componentOfDraft(id: string): { tx: Transaction; c: Component } {
    const c = this.components.get(id);
    if (!c) throw notFound(`Component ${id}`);
    return { tx: this.draft(c.transactionId), c };
  }

  patchComponent(id: string, patch: Partial<ComponentInput>): Component {
    const { tx, c } = this.componentOfDraft(id);
    // Switching kind replaces the other kind's fields.
    if (patch.ddsReferences) {
      delete c.supplierBusinessIds;
      delete c.plotIds;
    }
    if (patch.supplierBusinessIds) delete c.ddsReferences;
    Object.assign(c, patch, { updatedAt: new Date().toISOString() });
    tx.updatedAt = c.updatedAt;
    return c;
  }

  removeComponent(id: string): void {
    const { tx, c } = this.componentOfDraft(id);
    tx.components = tx.components.filter((x) => x.id !== c.id);
    this.components.delete(id);
  }

  submit(id: string): Transaction {
    const tx = this.get(id);
    if (tx.status !== 'DRAFT')
      throw conflict(`Transaction ${id} is in status ${tx.status}; only a DRAFT transaction can be submitted`);
    tx.submittedAt = new Date().toISOString();
    this.move(tx, 'TO_SUBMIT');
    const { seed, delays } = this.deps;
    this.deps.timers.after(
      pickDelay(delays.toSubmittedMs ?? [30_000, 300_000], unit(seed, 'to-submitted', tx.customId)),
      () => {
        this.move(tx, 'SUBMITTED');
        this.deps.timers.after(
          pickDelay(delays.validationMs ?? [20 * 60_000, 90 * 60_000], unit(seed, 'validation', tx.customId)),
          () => this.validate(tx),
        );
      },
    );
    return tx;
  }

  /** The EU system's verdict: deterministic per seed and customId. */
  private validate(tx: Transaction): void {
    if (!this.byId.has(tx.id) || tx.status !== 'SUBMITTED') return;
    const { seed } = this.deps;
    if (unit(seed, 'tx-error', tx.customId) < this.deps.errorRatio()) {
      tx.errorReason =
        ERROR_REASONS[Math.floor(unit(seed, 'tx-error-reason', tx.customId) * ERROR_REASONS.length)] ??
        ERROR_REASONS[0]!;
      this.move(tx, 'ERROR');
      return;
    }
    const year = String(new Date().getUTCFullYear() % 100).padStart(2, '0');
    tx.referenceNumber = `${year}${tx.countryOfActivity}${codeFor(10, seed, 'reference', tx.id)}`;
    tx.verificationNumber = codeFor(8, seed, 'verification', tx.id);
    this.move(tx, 'AVAILABLE');
  }

  /** Control: force a status (e.g. WITHDRAWN) and notify like any other change. */
  setStatus(id: string, status: string): Transaction {
    const tx = this.get(id);
    this.move(tx, status);
    return tx;
  }

  private move(tx: Transaction, status: string): void {
    if (!this.byId.has(tx.id)) return;
    tx.status = status;
    tx.updatedAt = new Date().toISOString();
    this.deps.onStatusChange(tx);
  }

  reset(): void {
    this.byId.clear();
    this.components.clear();
  }
}

/** Wire form; components only when asked, and their DDS references only when asked too. */
export function transactionToWire(
  tx: Transaction,
  includes: { components: boolean; ddsReferences: boolean },
): Record<string, unknown> {
  const { components, ...rest } = tx;
  if (!includes.components) return rest;
  return {
    ...rest,
    components: components.map((c) => {
      if (includes.ddsReferences) return { ...c, ddsReferences: c.ddsReferences ?? [] };
      const { ddsReferences: _d, ...plain } = c;
      return plain;
    }),
  };
}
