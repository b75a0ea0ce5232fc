// Validation of transaction and component bodies, class-validator style: every problem is
// reported as "<field> <rule>", unknown fields are stripped (pure). The contract's rules are the
// client's (schema/upstream/transaction-rules.ts): what the client refuses before sending, the
// simulator refuses too, with the rule's own words ("<field>: <rule>").
import type { RuleIssue } from '../schema/upstream/rule-issue.ts';
import {
  ACTIVITY_TYPES,
  COMPONENT_UNITS,
  CUSTOM_ID_MAX_LENGTH,
  VERIFICATION_NUMBER_FORMAT,
} from '../schema/upstream/service-facts.ts';
import {
  componentKindIssues,
  countryOfActivityIssues,
  hsCodeIssues,
  quantityIssues,
} from '../schema/upstream/transaction-rules.ts';
import { validateCustomData } from './custom-data.ts';

export interface ComponentInput {
  hsn: string;
  quantity: number;
  unit: string;
  description?: string;
  namePairs?: Array<{ commonName: string; scientificName: string }>;
  dateOfProduction?: string;
  endDateOfProduction?: string;
  supplierBusinessIds?: string[];
  plotIds?: string[];
  ddsReferences?: Array<{ id: string; verificationNumber: string }>;
}

export interface TransactionInput {
  customId?: string;
  activityType?: string;
  countryOfActivity?: string;
  legalEntityId?: string;
  isGeoLocationConfidential?: boolean;
  customData?: Record<string, string | number | boolean>;
  components?: ComponentInput[];
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const isDate = (v: unknown): boolean =>
  typeof v === 'string' && /^\d{4}-\d{2}-\d{2}/.test(v) && !Number.isNaN(Date.parse(v));
const isStringArray = (v: unknown): v is string[] =>
  Array.isArray(v) && v.every((s) => typeof s === 'string' && s.length > 0);
const said = (issues: readonly RuleIssue[]): string[] =>
  issues.map((i) => (i.path === '' ? i.message : `${i.path}: ${i.message}`));

/**
 * Validates a component; `partial` for PATCH (absent fields unchanged). `isSupplier` decides
 * whether a supplierBusinessId is a direct supplier of the caller.
 */
export function validateComponent(
  raw: unknown,
  prefix: string,
  isSupplier: (id: string) => boolean,
  partial = false,
): { value: Partial<ComponentInput>; messages: string[] } {
  const m: string[] = [];
  const value: Partial<ComponentInput> = {};
  if (!isObj(raw)) return { value, messages: [`${prefix || 'component'} must be an object`] };
  const f = (name: string): string => `${prefix}${name}`;
  const has = (k: string): boolean => raw[k] !== undefined;
  if (has('hsn') || !partial) {
    const issues = hsCodeIssues(raw['hsn'], f('hsn'));
    if (issues.length > 0) m.push(...said(issues));
    else value.hsn = raw['hsn'] as string;
  }
  if (has('quantity') || !partial) {
    const issues = quantityIssues(raw['quantity'], f('quantity'));
    if (issues.length > 0) m.push(...said(issues));
    else value.quantity = raw['quantity'] as number;
  }
  if (has('unit') || !partial) {
    if (typeof raw['unit'] !== 'string' || !(COMPONENT_UNITS as readonly string[]).includes(raw['unit']))
      m.push(`${f('unit')} must be one of the following values: ${COMPONENT_UNITS.join(', ')}`);
    else value.unit = raw['unit'];
  }
  if (has('description')) {
    if (typeof raw['description'] !== 'string') m.push(`${f('description')} must be a string`);
    else value.description = raw['description'];
  }
  if (has('namePairs')) {
    const pairs = raw['namePairs'];
    if (
      !Array.isArray(pairs) ||
      !pairs.every((p) => isObj(p) && typeof p['commonName'] === 'string' && typeof p['scientificName'] === 'string')
    ) {
      m.push(`${f('namePairs')} must be an array of {commonName, scientificName} strings`);
    } else
      value.namePairs = pairs.map((p: Obj) => ({
        commonName: String(p['commonName']),
        scientificName: String(p['scientificName']),
      }));
  }
  for (const k of ['dateOfProduction', 'endDateOfProduction'] as const) {
    if (!has(k)) continue;
    if (!isDate(raw[k])) m.push(`${f(k)} must be an ISO 8601 date string`);
    else value[k] = raw[k] as string;
  }
  let suppliers: string[] | undefined;
  if (has('supplierBusinessId')) {
    if (typeof raw['supplierBusinessId'] !== 'string' || raw['supplierBusinessId'] === '')
      m.push(`${f('supplierBusinessId')} must be a non-empty string`);
    else suppliers = [raw['supplierBusinessId']];
  }
  if (has('supplierBusinessIds')) {
    if (!isStringArray(raw['supplierBusinessIds']) || raw['supplierBusinessIds'].length === 0)
      m.push(`${f('supplierBusinessIds')} must be a non-empty array of strings`);
    else suppliers = [...new Set([...(suppliers ?? []), ...raw['supplierBusinessIds']])];
  }
  for (const id of suppliers ?? [])
    if (!isSupplier(id)) m.push(`${f('supplierBusinessId')} ${id} is not a direct supplier of the business`);
  if (suppliers) value.supplierBusinessIds = suppliers;
  if (has('plotIds')) {
    if (!isStringArray(raw['plotIds'])) m.push(`${f('plotIds')} must be an array of strings`);
    else value.plotIds = raw['plotIds'];
  }
  if (has('ddsReferences')) {
    const refs = raw['ddsReferences'];
    if (
      !Array.isArray(refs) ||
      refs.length === 0 ||
      !refs.every(
        (r) =>
          isObj(r) &&
          typeof r['id'] === 'string' &&
          r['id'] !== '' &&
          typeof r['verificationNumber'] === 'string' &&
          VERIFICATION_NUMBER_FORMAT.test(r['verificationNumber']),
      )
    ) {
      m.push(
        `${f('ddsReferences')} must be a non-empty array of {id, verificationNumber} (verificationNumber: 8 upper-case alphanumerics)`,
      );
    } else
      value.ddsReferences = refs.map((r: Obj) => ({
        id: String(r['id']),
        verificationNumber: String(r['verificationNumber']),
      }));
  }
  m.push(...said(componentKindIssues(raw, prefix.replace(/\.$/, ''), partial)));
  return { value, messages: m };
}

/** Validates a transaction body; `partial` for PATCH. */
export function validateTransaction(
  raw: unknown,
  isSupplier: (id: string) => boolean,
  partial = false,
): { value: TransactionInput; messages: string[] } {
  const m: string[] = [];
  const value: TransactionInput = {};
  if (!isObj(raw)) return { value, messages: ['body must be a JSON object'] };
  const has = (k: string): boolean => raw[k] !== undefined;
  if (has('customId')) {
    if (
      typeof raw['customId'] !== 'string' ||
      raw['customId'].length === 0 ||
      raw['customId'].length > CUSTOM_ID_MAX_LENGTH
    )
      m.push(`customId must be a string of 1 to ${CUSTOM_ID_MAX_LENGTH} characters`);
    else value.customId = raw['customId'];
  }
  if (has('activityType') || !partial) {
    if (
      typeof raw['activityType'] !== 'string' ||
      !(ACTIVITY_TYPES as readonly string[]).includes(raw['activityType'])
    ) {
      m.push(`activityType must be one of the following values: ${ACTIVITY_TYPES.join(', ')}`);
    } else value.activityType = raw['activityType'];
  }
  if (has('countryOfActivity') || !partial) {
    const issues = countryOfActivityIssues(raw['countryOfActivity']);
    if (issues.length > 0) m.push(...said(issues));
    else value.countryOfActivity = raw['countryOfActivity'] as string;
  }
  if (has('legalEntityId')) {
    if (typeof raw['legalEntityId'] !== 'string' || raw['legalEntityId'] === '')
      m.push('legalEntityId must be a non-empty string');
    else value.legalEntityId = raw['legalEntityId'];
  }
  if (has('isGeoLocationConfidential')) {
    if (typeof raw['isGeoLocationConfidential'] !== 'boolean')
      m.push('isGeoLocationConfidential must be a boolean value');
    else value.isGeoLocationConfidential = raw['isGeoLocationConfidential'];
  }
  if (has('customData')) {
    const cd = validateCustomData(raw['customData']);
    if (cd.ok) value.customData = cd.value;
    else m.push(...cd.messages);
  }
  if (has('components')) {
    if (!Array.isArray(raw['components'])) m.push('components must be an array');
    else {
      const list: ComponentInput[] = [];
      raw['components'].forEach((c, i) => {
        const r = validateComponent(c, `components.${i}.`, isSupplier);
        m.push(...r.messages);
        list.push(r.value as ComponentInput);
      });
      value.components = list;
    }
  }
  return { value, messages: m };
}
