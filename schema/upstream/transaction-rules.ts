import { describeValue, type RuleIssue } from './rule-issue.ts';
import { COMMODITY_HS_CHAPTERS, EU_COUNTRY_CODES, HS_CODE_FORMAT } from './service-facts.ts';

/**
 * The rules of a transaction body that the client (upstream/request-checks.ts), the file intake
 * (domain/submission/shipment-rules.ts) and the simulator (simulator/transaction-input.ts) all
 * apply: each lives here once, so a correction of a fact in service-facts.ts changes all three. Pure;
 * each returns the issues at the field path its caller gives (none when the value is valid).
 */

const one = (path: string, rule: string, message: string): RuleIssue[] => [{ path, rule, message }];
const at = (field: string, name: string): string => (field === '' ? name : `${field}.${name}`);

/** `hsn`: a string of 4, 6, 8 or 10 digits whose chapter (first two) is one of a regulated commodity. */
export function hsCodeIssues(value: unknown, field = 'hsn'): RuleIssue[] {
  if (value === undefined)
    return one(field, 'hsCode.required', 'required: an HS code as a string of digits (e.g. "1801")');
  if (typeof value !== 'string')
    return one(field, 'hsCode.type', `must be a string of digits (leading zeros matter), got ${describeValue(value)}`);
  if (!HS_CODE_FORMAT.test(value))
    return one(field, 'hsCode.digits', `an HS code of 4, 6, 8 or 10 digits, got ${describeValue(value)}`);
  const chapter = value.slice(0, 2);
  if (!COMMODITY_HS_CHAPTERS.has(chapter)) {
    return one(
      field,
      'hsCode.chapter',
      `HS chapter ${chapter} is not a chapter of the regulated commodities (${[...COMMODITY_HS_CHAPTERS].join(', ')})`,
    );
  }
  return [];
}

/** `quantity`: a finite number greater than 0 (ASSUMED: an amount of goods is never zero or negative). */
export function quantityIssues(value: unknown, field = 'quantity'): RuleIssue[] {
  if (value === undefined) return one(field, 'quantity.required', 'required: a number greater than 0');
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0)
    return one(field, 'quantity.positive', `a number greater than 0, got ${describeValue(value)}`);
  return [];
}

/** `countryOfActivity`: an EU member state or XI, as ISO 3166-1 alpha-2 in upper case (EU_COUNTRY_CODES). */
export function countryOfActivityIssues(value: unknown, field = 'countryOfActivity'): RuleIssue[] {
  const rule = 'an EU country as an ISO 3166-1 alpha-2 code in upper case (e.g. DE, NL)';
  if (value === undefined) return one(field, 'countryOfActivity.required', `required: ${rule}`);
  if (typeof value !== 'string' || !EU_COUNTRY_CODES.has(value))
    return one(field, 'countryOfActivity.eu', `${rule}, got ${describeValue(value)}`);
  return [];
}

/**
 * A component is of exactly one kind (contract): an internal supplier's goods (`supplierBusinessId` or
 * `supplierBusinessIds`, optional `plotIds`) or goods already declared (`ddsReferences`). `field` is
 * the component's own path ('' for a body that is the component). A partial update (`partial`) may
 * name neither kind; it may not name both, nor plotIds with ddsReferences.
 */
export function componentKindIssues(c: Readonly<Record<string, unknown>>, field: string, partial = false): RuleIssue[] {
  const supplier = c['supplierBusinessId'] !== undefined || c['supplierBusinessIds'] !== undefined;
  const declared = c['ddsReferences'] !== undefined;
  if (supplier === declared && (supplier || !partial)) {
    return one(
      field,
      'component.kind',
      'give either ddsReferences (goods already declared) or supplierBusinessId / supplierBusinessIds (goods of an internal supplier), not both, not neither',
    );
  }
  if (declared && c['plotIds'] !== undefined)
    return one(
      at(field, 'plotIds'),
      'component.plotIds',
      'only for internal-supplier components (not with ddsReferences)',
    );
  return [];
}
