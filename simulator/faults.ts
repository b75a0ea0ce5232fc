// Fault injection: profiles, parsing, and a deterministic per-request decision (seed × request counter).
import { unit } from './rng.ts';

export interface FaultProfile {
  /** Probabilities (0..1) of each exclusive fault kind per request. */
  http500: number;
  http503: number;
  http429: number;
  http429NoRetryAfter: number;
  reset: number;
  truncate: number;
  tokenExpiry: number;
  /** Independent: probability that POST /transactions is applied and its response dropped. */
  dropCreateResponse: number;
  /** Independent: probability of added latency, and its range in ms (scaled by timeScale). */
  latency: number;
  latencyMs: [number, number];
  /** Retry-After value in seconds for http429 (scaled by timeScale, rounded up). */
  retryAfterSeconds: number;
}

export const FAULT_KINDS = [
  'http500',
  'http503',
  'http429',
  'http429NoRetryAfter',
  'reset',
  'truncate',
  'tokenExpiry',
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

const NONE: FaultProfile = {
  http500: 0,
  http503: 0,
  http429: 0,
  http429NoRetryAfter: 0,
  reset: 0,
  truncate: 0,
  tokenExpiry: 0,
  dropCreateResponse: 0,
  latency: 0,
  latencyMs: [0, 0],
  retryAfterSeconds: 1,
};

export const FAULT_PROFILES: Record<string, FaultProfile> = {
  none: NONE,
  flaky: {
    ...NONE,
    http500: 0.02,
    http503: 0.02,
    http429: 0.02,
    http429NoRetryAfter: 0.01,
    reset: 0.01,
    truncate: 0.01,
    tokenExpiry: 0.005,
    dropCreateResponse: 0.03,
    latency: 0.1,
    latencyMs: [50, 500],
    retryAfterSeconds: 2,
  },
  hostile: {
    ...NONE,
    http500: 0.08,
    http503: 0.08,
    http429: 0.1,
    http429NoRetryAfter: 0.05,
    reset: 0.05,
    truncate: 0.05,
    tokenExpiry: 0.03,
    dropCreateResponse: 0.2,
    latency: 0.3,
    latencyMs: [200, 3000],
    retryAfterSeconds: 5,
  },
};

/** Accepts a profile name, a JSON object string, or an object; unknown keys and bad values throw. */
export function parseFaults(input: string | Partial<FaultProfile> | undefined): FaultProfile {
  if (input === undefined) return NONE;
  let raw: unknown = input;
  if (typeof input === 'string') {
    const named = FAULT_PROFILES[input.trim()];
    if (named) return named;
    if (!input.trim().startsWith('{'))
      throw new Error(
        `faults must be one of ${Object.keys(FAULT_PROFILES).join(', ')} or a JSON object (got "${input}")`,
      );
    try {
      raw = JSON.parse(input);
    } catch {
      throw new Error('faults must be valid JSON when not a profile name');
    }
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new Error('faults must be a JSON object');
  const obj = raw as Record<string, unknown>;
  const base = typeof obj['profile'] === 'string' ? FAULT_PROFILES[obj['profile']] : NONE;
  if (!base) throw new Error(`faults.profile must be one of ${Object.keys(FAULT_PROFILES).join(', ')}`);
  const out: FaultProfile = { ...base };
  for (const [key, value] of Object.entries(obj)) {
    if (key === 'profile') continue;
    if (key === 'latencyMs') {
      if (
        !Array.isArray(value) ||
        value.length !== 2 ||
        !value.every((v) => typeof v === 'number' && v >= 0) ||
        (value[0] as number) > (value[1] as number)
      ) {
        throw new Error('faults.latencyMs must be [min, max] with 0 <= min <= max');
      }
      out.latencyMs = [value[0] as number, value[1] as number];
    } else if (key === 'retryAfterSeconds') {
      if (typeof value !== 'number' || !Number.isInteger(value) || value < 0)
        throw new Error('faults.retryAfterSeconds must be a non-negative integer');
      out.retryAfterSeconds = value;
    } else if (key in NONE) {
      if (typeof value !== 'number' || value < 0 || value > 1)
        throw new Error(`faults.${key} must be a probability between 0 and 1`);
      (out as unknown as Record<string, number>)[key] = value;
    } else {
      throw new Error(`faults has unknown key "${key}" (known: profile, ${Object.keys(NONE).join(', ')})`);
    }
  }
  const exclusive = FAULT_KINDS.reduce((sum, k) => sum + out[k], 0);
  if (exclusive > 1)
    throw new Error(
      'faults: the probabilities of http500, http503, http429, http429NoRetryAfter, reset, truncate and tokenExpiry must add up to at most 1',
    );
  return out;
}

export interface FaultDecision {
  kind?: FaultKind;
  latencyMs: number;
  dropCreateResponse: boolean;
}

/** Faults the token endpoint never gets: its response is not truncated and it has no token to expire. */
const NOT_ON_TOKEN: ReadonlySet<FaultKind> = new Set(['truncate', 'tokenExpiry']);

export function decideFault(
  profile: FaultProfile,
  seed: number,
  counter: number,
  isTokenEndpoint: boolean,
): FaultDecision {
  const u = unit(seed, 'fault', counter);
  let cumulative = 0;
  let kind: FaultKind | undefined;
  for (const k of FAULT_KINDS) {
    cumulative += profile[k];
    if (u < cumulative) {
      kind = k;
      break;
    }
  }
  if (kind && isTokenEndpoint && NOT_ON_TOKEN.has(kind)) kind = undefined;
  const [min, max] = profile.latencyMs;
  const latencyMs =
    unit(seed, 'latency', counter) < profile.latency ? min + unit(seed, 'latency-ms', counter) * (max - min) : 0;
  const decision: FaultDecision = {
    latencyMs,
    dropCreateResponse: unit(seed, 'drop', counter) < profile.dropCreateResponse,
  };
  if (kind) decision.kind = kind;
  return decision;
}
