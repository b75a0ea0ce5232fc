// Parsing of GET /businesses/{id}/plots query parameters into a validated query (pure). The
// contract's relations, their allowed combinations, filter operations and page limit are the
// client's (schema/upstream/).
import { isAllowedPlotRelationSet } from '../schema/upstream/plot-rules.ts';
import { PLOT_FILTER_OPERATIONS, PLOT_PAGE_MAX_LIMIT, PLOT_RELATIONS } from '../schema/upstream/service-facts.ts';

export const PLOT_BASE_FIELDS = [
  'id',
  'createdAt',
  'updatedAt',
  'geometry',
  'commodities',
  'name',
  'surfaceArea',
  'countryCode',
  'species',
  'productionDateStart',
  'productionDateEnd',
  'filename',
  'description',
  'ownerId',
  'customData',
] as const;
const SELECTABLE = new Set<string>([...PLOT_BASE_FIELDS, ...PLOT_RELATIONS]);

/** The contract's default page size (ddsync itself asks for full pages). */
export const DEFAULT_LIMIT = 100;

export type FilterField = keyof typeof PLOT_FILTER_OPERATIONS;
export interface PlotFilter {
  field: FilterField;
  not: boolean;
  op: '$contains' | '$eq' | '$gte' | '$lte';
  value: string;
  number?: number;
}

export interface PlotQuery {
  page: number;
  limit: number;
  filters: PlotFilter[];
  select?: Set<string>;
  includes?: Set<string>;
}

export type ParsedPlotQuery = { ok: true; query: PlotQuery } | { ok: false; messages: string[] };

const OPERATIONS: Record<FilterField, readonly string[]> = PLOT_FILTER_OPERATIONS;

/** Positive integers only; anything else falls back (the contract's "invalid → default"). */
function positiveInt(raw: string | null): number | undefined {
  if (raw === null || !/^\s*\d+\s*$/.test(raw)) return undefined;
  const n = Number(raw);
  return Number.isSafeInteger(n) && n >= 1 ? n : undefined;
}

function commaList(raw: string): string[] {
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

function parseFilter(field: FilterField, raw: string): PlotFilter | string {
  const rule = `filter.${field} must have the format {$not}:OPERATION:VALUE with OPERATION one of ${OPERATIONS[field].join(', ')}`;
  let rest = raw;
  let not = false;
  if (rest.startsWith('$not:')) {
    not = true;
    rest = rest.slice(5);
  }
  const colon = rest.indexOf(':');
  if (colon < 0) return `${rule} (got "${raw}")`;
  const op = rest.slice(0, colon);
  const value = rest.slice(colon + 1);
  if (!OPERATIONS[field].includes(op) || value.length === 0) return `${rule} (got "${raw}")`;
  const filter: PlotFilter = { field, not, op: op as PlotFilter['op'], value };
  if (field === 'areaHa') {
    const n = Number(value);
    if (!Number.isFinite(n)) return `filter.areaHa value must be a number of hectares (got "${value}")`;
    filter.number = n;
  }
  return filter;
}

export function parsePlotQuery(params: URLSearchParams): ParsedPlotQuery {
  const messages: string[] = [];
  const page = positiveInt(params.get('page')) ?? 1;
  const limit = Math.min(PLOT_PAGE_MAX_LIMIT, positiveInt(params.get('limit')) ?? DEFAULT_LIMIT);
  const filters: PlotFilter[] = [];
  for (const field of Object.keys(OPERATIONS) as FilterField[]) {
    for (const raw of params.getAll(`filter.${field}`)) {
      const parsed = parseFilter(field, raw);
      if (typeof parsed === 'string') messages.push(parsed);
      else filters.push(parsed);
    }
  }
  let select: Set<string> | undefined;
  const rawSelect = params.get('select');
  if (rawSelect !== null && rawSelect.trim() !== '') {
    const fields = commaList(rawSelect);
    const unknown = fields.filter((f) => !SELECTABLE.has(f));
    if (unknown.length > 0)
      messages.push(`select must be a comma-separated list of plot fields; unknown: ${unknown.join(', ')}`);
    select = new Set(['id', ...fields]);
  }
  let includes: Set<string> | undefined;
  const rawIncludes = params.get('includes');
  if (rawIncludes !== null && rawIncludes.trim() !== '') {
    const names = [...new Set(commaList(rawIncludes))];
    const unknown = names.filter((n) => !(PLOT_RELATIONS as readonly string[]).includes(n));
    if (unknown.length > 0) {
      messages.push(
        `includes must be a comma-separated list of ${PLOT_RELATIONS.join(', ')}; unknown: ${unknown.join(', ')}`,
      );
    } else if (!isAllowedPlotRelationSet(names)) {
      messages.push(
        'includes may combine relations only as mostRecentAnalysis with mostRecentAnalysesByType, or minimumAnalysisResults with riskLevel',
      );
    }
    includes = new Set(names);
  }
  if (messages.length > 0) return { ok: false, messages };
  const query: PlotQuery = { page, limit, filters };
  if (select) query.select = select;
  if (includes) query.includes = includes;
  return { ok: true, query };
}

/** Whether a plot (in its wire-independent form) passes every filter (they combine with AND). */
export function matchesFilters(
  filters: PlotFilter[],
  plot: { commodities: string[]; countryCode: string; riskAssessmentStatus: string; surfaceArea: number },
): boolean {
  for (const f of filters) {
    let hit: boolean;
    switch (f.field) {
      case 'commodities':
        hit = plot.commodities.includes(f.value);
        break;
      case 'countryCode':
        hit = plot.countryCode === f.value;
        break;
      case 'riskAssessmentStatus':
        hit = plot.riskAssessmentStatus === f.value;
        break;
      case 'areaHa': {
        const ha = plot.surfaceArea / 10_000;
        hit = f.op === '$gte' ? ha >= (f.number ?? 0) : ha <= (f.number ?? 0);
        break;
      }
    }
    if (hit === f.not) return false;
  }
  return true;
}
