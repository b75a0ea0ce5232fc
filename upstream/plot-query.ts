import {
  PLOT_FILTER_OPERATIONS,
  PLOT_PAGE_MAX_LIMIT,
  PLOT_RELATION_PAIRS,
  PLOT_RELATIONS,
  PATHS,
} from '../schema/upstream/service-facts.ts';
import { isAllowedPlotRelationSet } from '../schema/upstream/plot-rules.ts';
import { RequestValidationError, type ValidationIssue } from './errors.ts';

/**
 * Query of GET /businesses/{businessId}/plots: `filter.*`, `select`, `includes`, `page`, `limit`.
 * The types allow only what the contract allows; the runtime checks refuse the rest too (for
 * callers holding untyped input, e.g. the CLI) with a RequestValidationError before any request.
 */

export type PlotFilterField = keyof typeof PLOT_FILTER_OPERATIONS;
export type PlotRelation = (typeof PLOT_RELATIONS)[number];

/** One condition; `not` prefixes `$not:`. Wire format `{$not:}OPERATION:VALUE`. */
export interface FilterCondition<Op extends string, V> {
  op: Op;
  value: V;
  not?: boolean;
}

export interface PlotFilter {
  commodities?: readonly FilterCondition<'$contains', string>[];
  countryCode?: readonly FilterCondition<'$eq', string>[];
  riskAssessmentStatus?: readonly FilterCondition<'$eq', string>[];
  /** Hectares (plots carry surfaceArea in m²). */
  areaHa?: readonly FilterCondition<'$gte' | '$lte', number>[];
}

export interface PlotQuery {
  filter?: PlotFilter;
  /** Fields to return; must include `id` (ddsync keys plots by id). Default: all fields. */
  select?: readonly string[];
  /** At most one relation, or one of the allowed pairs. */
  includes?: readonly PlotRelation[];
}

const ENDPOINT = `GET ${PATHS.supplierPlots}`;
const FIELD_NAME = /^[A-Za-z][A-Za-z0-9_.]*$/;

function filterIssues(filter: unknown): { issues: ValidationIssue[]; pairs: [string, string][] } {
  const issues: ValidationIssue[] = [];
  const pairs: [string, string][] = [];
  if (filter === undefined) return { issues, pairs };
  if (filter === null || typeof filter !== 'object')
    return { issues: [{ path: 'filter', message: 'expected object' }], pairs };
  for (const [field, conditions] of Object.entries(filter)) {
    const allowed = (PLOT_FILTER_OPERATIONS as Record<string, readonly string[]>)[field];
    if (!Object.hasOwn(PLOT_FILTER_OPERATIONS, field) || !allowed) {
      issues.push({
        path: `filter.${field}`,
        message: `unknown filter field (allowed: ${Object.keys(PLOT_FILTER_OPERATIONS).join(', ')})`,
      });
      continue;
    }
    if (conditions === undefined) continue;
    if (!Array.isArray(conditions)) {
      issues.push({ path: `filter.${field}`, message: 'expected an array of conditions' });
      continue;
    }
    conditions.forEach((c: unknown, i: number) => {
      const at = `filter.${field}[${i}]`;
      const { op, value, not } = (c ?? {}) as { op?: unknown; value?: unknown; not?: unknown };
      if (typeof op !== 'string' || !allowed.includes(op)) {
        issues.push({
          path: `${at}.op`,
          message: `operation ${JSON.stringify(op)} not allowed on ${field} (allowed: ${allowed.join(', ')})`,
        });
        return;
      }
      if (not !== undefined && typeof not !== 'boolean') {
        issues.push({ path: `${at}.not`, message: 'expected boolean' });
        return;
      }
      let text: string;
      if (field === 'areaHa') {
        const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
        if (typeof n !== 'number' || !Number.isFinite(n) || n < 0) {
          issues.push({
            path: `${at}.value`,
            message: `areaHa must be a non-negative number of hectares, got ${JSON.stringify(value)}`,
          });
          return;
        }
        text = String(n);
      } else {
        if (typeof value !== 'string' || value.trim() === '') {
          issues.push({ path: `${at}.value`, message: 'expected a non-empty string' });
          return;
        }
        text = value;
      }
      pairs.push([`filter.${field}`, `${not ? '$not:' : ''}${op}:${text}`]);
    });
  }
  return { issues, pairs };
}

function includesIssues(includes: unknown): ValidationIssue[] {
  if (includes === undefined) return [];
  if (!Array.isArray(includes)) return [{ path: 'includes', message: 'expected an array of relation names' }];
  const issues: ValidationIssue[] = [];
  for (const name of includes) {
    if (!(PLOT_RELATIONS as readonly unknown[]).includes(name)) {
      issues.push({
        path: 'includes',
        message: `unknown relation ${JSON.stringify(name)} (known: ${PLOT_RELATIONS.join(', ')})`,
      });
    }
  }
  if (new Set(includes).size !== includes.length)
    issues.push({ path: 'includes', message: 'a relation is listed twice' });
  if (issues.length || includes.length <= 1) return issues;
  if (!isAllowedPlotRelationSet(includes as string[])) {
    const pairs = PLOT_RELATION_PAIRS.map(([a, b]) => `${a}+${b}`).join(' or ');
    issues.push({
      path: 'includes',
      message: `combination ${includes.join('+')} not allowed: at most one relation, or ${pairs}`,
    });
  }
  return issues;
}

function selectIssues(select: unknown): ValidationIssue[] {
  if (select === undefined) return [];
  if (!Array.isArray(select) || select.length === 0)
    return [{ path: 'select', message: 'expected a non-empty array of field names' }];
  const issues: ValidationIssue[] = [];
  for (const f of select) {
    if (typeof f !== 'string' || !FIELD_NAME.test(f))
      issues.push({ path: 'select', message: `invalid field name ${JSON.stringify(f)}` });
  }
  if (!select.includes('id')) issues.push({ path: 'select', message: 'must include id (plots are keyed by id)' });
  return issues;
}

/** A positive integer page; an invalid page is served as page 1 upstream, so never send one. */
export function checkPage(page: unknown): ValidationIssue[] {
  return Number.isSafeInteger(page) && (page as number) >= 1
    ? []
    : [{ path: 'page', message: `must be a positive integer, got ${JSON.stringify(page)}` }];
}

/** The limit the service will apply: the server clamps at 500. */
export function effectiveLimit(limit: number): number {
  return Math.min(limit, PLOT_PAGE_MAX_LIMIT);
}

export function checkLimit(limit: unknown): ValidationIssue[] {
  return Number.isSafeInteger(limit) && (limit as number) >= 1
    ? []
    : [{ path: 'limit', message: `must be a positive integer, got ${JSON.stringify(limit)}` }];
}

/** Validates the query and renders it; repeated `filter.*` params for several conditions. */
export function buildPlotQuery(query: PlotQuery = {}, page?: number, limit?: number): URLSearchParams {
  const { issues, pairs } = filterIssues(query.filter);
  issues.push(...selectIssues(query.select), ...includesIssues(query.includes));
  if (page !== undefined) issues.push(...checkPage(page));
  if (limit !== undefined) issues.push(...checkLimit(limit));
  if (issues.length) throw new RequestValidationError(ENDPOINT, issues);

  const params = new URLSearchParams();
  if (page !== undefined) params.set('page', String(page));
  if (limit !== undefined) params.set('limit', String(effectiveLimit(limit)));
  for (const [k, v] of pairs) params.append(k, v);
  if (query.select) params.set('select', query.select.join(','));
  if (query.includes?.length) params.set('includes', query.includes.join(','));
  return params;
}
