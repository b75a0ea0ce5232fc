import type { ComponentInput, CreateTransactionInput } from '../../schema/upstream.ts';
import { checkCustomData } from '../../schema/upstream/custom-data.ts';
import { describeValue as describe, type RuleIssue } from '../../schema/upstream/rule-issue.ts';
import * as serviceFacts from '../../schema/upstream/service-facts.ts';
import { printableExcerpt } from './printable.ts';
import {
  componentKindIssues,
  countryOfActivityIssues,
  hsCodeIssues,
  quantityIssues,
} from '../../schema/upstream/transaction-rules.ts';

/**
 * One row of a shipments file → the body of the transaction to create, or every rule it breaks,
 * each with the field it concerns. Pure; knows nothing of files or keys seen elsewhere.
 *
 * A row: `key` (required; becomes the transaction's customId), `activityType`, `countryOfActivity`,
 * optional `legalEntityId`, `isGeoLocationConfidential`, `customData`, and `components`: each either
 * an internal-supplier component (`supplierBusinessId` or `supplierBusinessIds`, optional `plotIds`)
 * or a DDS-reference component (`ddsReferences: [{id, verificationNumber}]`), with `hsn`, `quantity`,
 * `unit` and optional `description`, `namePairs`, `dateOfProduction`, `endDateOfProduction`.
 * Unknown fields are refused, at every level (a name pair and a DDS reference too): a misspelt
 * optional field would otherwise vanish silently, or be sent unchecked. So is a customData key the
 * service owns (starting with _ or $): it would be dropped, not stored. What is accepted is sent as
 * it was read, member for member; how the file's bytes became these values is shipment-file.ts's.
 */

export interface RowError {
  field: string;
  rule: string;
}

export type RowResult =
  | { ok: true; key: string; body: CreateTransactionInput }
  | { ok: false; key: string | null; errors: RowError[] };

const {
  ACTIVITY_TYPES,
  COMPONENT_UNITS,
  DDS_REFERENCE_FORMAT,
  VERIFICATION_NUMBER_FORMAT,
  CUSTOM_ID_MAX_LENGTH,
  FORBIDDEN_CUSTOM_DATA_KEYS,
  RESERVED_CUSTOM_DATA_KEY,
} = serviceFacts;

const ROW_FIELDS = [
  'key',
  'activityType',
  'countryOfActivity',
  'legalEntityId',
  'isGeoLocationConfidential',
  'customData',
  'components',
];
const COMPONENT_FIELDS = [
  'hsn',
  'quantity',
  'unit',
  'description',
  'namePairs',
  'dateOfProduction',
  'endDateOfProduction',
  'supplierBusinessId',
  'supplierBusinessIds',
  'plotIds',
  'ddsReferences',
];
const NAME_PAIR_FIELDS = ['commonName', 'scientificName'];
const DDS_REFERENCE_FIELDS = ['id', 'verificationNumber'];
/** Many components in one transaction are fine; thousands are a mistake (and a huge request). */
const MAX_COMPONENTS = 1000;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const nonEmptyString = (v: unknown): v is string => typeof v === 'string' && v.trim() !== '';
/** A key is an identifier: control characters (C0, DEL, C1) are refused. */
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

function calendarDate(v: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(v);
  if (!m) return false;
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return d.getUTCFullYear() === Number(m[1]) && d.getUTCMonth() === Number(m[2]) - 1 && d.getUTCDate() === Number(m[3]);
}

/** The contract's rules (schema/upstream/) report a path and a message; a row reports field and rule. */
function report(issues: readonly RuleIssue[], errors: RowError[]): void {
  for (const i of issues) errors.push({ field: i.path, rule: i.message });
}

function unknownFields(o: Obj, known: readonly string[], at: string, errors: RowError[]): void {
  for (const k of Object.keys(o)) {
    if (!known.includes(k))
      errors.push({
        field: `${at}${printableExcerpt(k)}`,
        rule: `unknown field (expected one of ${known.join(', ')})`,
      });
  }
}

export function checkShipmentRow(row: unknown): RowResult {
  if (!isObj(row))
    return { ok: false, key: null, errors: [{ field: '(row)', rule: `must be a JSON object, got ${describe(row)}` }] };
  const errors: RowError[] = [];
  const key = row['key'];
  if (!nonEmptyString(key))
    errors.push({
      field: 'key',
      rule:
        key === undefined
          ? "required: a non-empty string (it becomes the transaction's customId)"
          : `must be a non-empty string, got ${describe(key)}`,
    });
  else if (key.length > CUSTOM_ID_MAX_LENGTH)
    errors.push({ field: 'key', rule: `at most ${CUSTOM_ID_MAX_LENGTH} characters, got ${key.length}` });
  else if (CONTROL.test(key)) errors.push({ field: 'key', rule: 'must not contain control characters' });
  unknownFields(row, ROW_FIELDS, '', errors);

  const activityType = row['activityType'];
  if (typeof activityType !== 'string' || !(ACTIVITY_TYPES as readonly string[]).includes(activityType)) {
    errors.push({
      field: 'activityType',
      rule: `${activityType === undefined ? 'required: ' : ''}one of ${ACTIVITY_TYPES.join(', ')}${activityType === undefined ? '' : `, got ${describe(activityType)}`}`,
    });
  }
  const country = row['countryOfActivity'];
  report(countryOfActivityIssues(country), errors);
  if (row['legalEntityId'] !== undefined && !nonEmptyString(row['legalEntityId']))
    errors.push({
      field: 'legalEntityId',
      rule: `a non-empty string when given, got ${describe(row['legalEntityId'])}`,
    });
  if (row['isGeoLocationConfidential'] !== undefined && typeof row['isGeoLocationConfidential'] !== 'boolean') {
    errors.push({
      field: 'isGeoLocationConfidential',
      rule: `true or false when given, got ${describe(row['isGeoLocationConfidential'])}`,
    });
  }
  let customData: Record<string, string | number | boolean> | undefined;
  if (row['customData'] !== undefined) {
    const checked = checkCustomData(row['customData']);
    report(checked.issues, errors);
    customData = checked.data;
    if (isObj(row['customData']))
      for (const k of Object.keys(row['customData'])) {
        if (RESERVED_CUSTOM_DATA_KEY.test(k) && !FORBIDDEN_CUSTOM_DATA_KEYS.has(k))
          errors.push({
            field: `customData.${printableExcerpt(k)}`,
            rule: 'a key starting with _ or $ is one the service keeps for itself (customData rule 6): it would be dropped, not stored; rename it',
          });
      }
  }

  const components: ComponentInput[] = [];
  const list = row['components'];
  if (!Array.isArray(list) || list.length === 0) {
    errors.push({
      field: 'components',
      rule:
        list === undefined
          ? 'required: a list of at least one component'
          : `a list of at least one component, got ${Array.isArray(list) ? 'an empty list' : describe(list)}`,
    });
  } else if (list.length > MAX_COMPONENTS) {
    errors.push({ field: 'components', rule: `at most ${MAX_COMPONENTS} components, got ${list.length}` });
  } else {
    list.forEach((c, i) => {
      const component = checkComponent(c, `components[${i}].`, errors);
      if (component) components.push(component);
    });
  }

  if (errors.length > 0) return { ok: false, key: nonEmptyString(key) ? key : null, errors };
  const body: CreateTransactionInput = {
    customId: key as string,
    activityType: activityType as CreateTransactionInput['activityType'],
    countryOfActivity: country as string,
    components,
    ...(row['legalEntityId'] !== undefined ? { legalEntityId: row['legalEntityId'] as string } : {}),
    ...(row['isGeoLocationConfidential'] !== undefined
      ? { isGeoLocationConfidential: row['isGeoLocationConfidential'] as boolean }
      : {}),
    ...(customData !== undefined ? { customData } : {}),
  };
  return { ok: true, key: key as string, body };
}

function checkComponent(c: unknown, at: string, errors: RowError[]): ComponentInput | undefined {
  if (!isObj(c)) {
    errors.push({ field: at.slice(0, -1), rule: `must be an object, got ${describe(c)}` });
    return undefined;
  }
  const before = errors.length;
  unknownFields(c, COMPONENT_FIELDS, at, errors);
  report(hsCodeIssues(c['hsn'], `${at}hsn`), errors);
  report(quantityIssues(c['quantity'], `${at}quantity`), errors);
  const unit = c['unit'];
  if (typeof unit !== 'string' || !(COMPONENT_UNITS as readonly string[]).includes(unit)) {
    errors.push({
      field: `${at}unit`,
      rule: `${unit === undefined ? 'required: ' : ''}one of ${COMPONENT_UNITS.join(', ')}${unit === undefined ? '' : `, got ${describe(unit)}`}`,
    });
  }
  if (c['description'] !== undefined && typeof c['description'] !== 'string')
    errors.push({ field: `${at}description`, rule: `a string when given, got ${describe(c['description'])}` });
  checkNamePairs(c['namePairs'], `${at}namePairs`, errors);
  checkProductionDates(c, at, errors);
  checkKind(c, at, errors);
  return errors.length === before ? (c as unknown as ComponentInput) : undefined;
}

function checkNamePairs(v: unknown, at: string, errors: RowError[]): void {
  if (v === undefined) return;
  if (!Array.isArray(v)) {
    errors.push({ field: at, rule: `a list of {commonName, scientificName} when given, got ${describe(v)}` });
    return;
  }
  v.forEach((p, i) => {
    if (!isObj(p) || !nonEmptyString(p['commonName']) || !nonEmptyString(p['scientificName'])) {
      errors.push({ field: `${at}[${i}]`, rule: 'must be {commonName, scientificName}, both non-empty strings' });
    }
    if (isObj(p)) unknownFields(p, NAME_PAIR_FIELDS, `${at}[${i}].`, errors);
  });
}

function checkProductionDates(c: Obj, at: string, errors: RowError[]): void {
  const start = c['dateOfProduction'];
  const end = c['endDateOfProduction'];
  for (const [name, v] of [
    ['dateOfProduction', start],
    ['endDateOfProduction', end],
  ] as const) {
    if (v !== undefined && (typeof v !== 'string' || !calendarDate(v)))
      errors.push({ field: `${at}${name}`, rule: `a date as YYYY-MM-DD when given, got ${describe(v)}` });
  }
  if (typeof start === 'string' && typeof end === 'string' && calendarDate(start) && calendarDate(end) && end < start) {
    errors.push({ field: `${at}endDateOfProduction`, rule: `must not be before dateOfProduction (${start})` });
  }
}

/** Exactly one kind (the contract's rule), then the fields of that kind. */
function checkKind(c: Obj, at: string, errors: RowError[]): void {
  const one = c['supplierBusinessId'];
  const many = c['supplierBusinessIds'];
  const refs = c['ddsReferences'];
  const kind = componentKindIssues(c, at.slice(0, -1));
  report(kind, errors);
  if (kind.some((i) => i.rule === 'component.kind')) return;
  if (one !== undefined || many !== undefined) {
    if (one !== undefined && many !== undefined)
      errors.push({
        field: `${at}supplierBusinessIds`,
        rule: 'give supplierBusinessId or supplierBusinessIds, not both',
      });
    if (one !== undefined && !nonEmptyString(one))
      errors.push({ field: `${at}supplierBusinessId`, rule: `a non-empty string, got ${describe(one)}` });
    if (many !== undefined && (!Array.isArray(many) || many.length === 0 || !many.every(nonEmptyString))) {
      errors.push({ field: `${at}supplierBusinessIds`, rule: 'a non-empty list of non-empty strings' });
    }
    const plots = c['plotIds'];
    if (plots !== undefined && (!Array.isArray(plots) || !plots.every(nonEmptyString)))
      errors.push({ field: `${at}plotIds`, rule: 'a list of non-empty strings when given' });
    return;
  }
  if (!Array.isArray(refs) || refs.length === 0) {
    errors.push({ field: `${at}ddsReferences`, rule: 'a non-empty list of {id, verificationNumber}' });
    return;
  }
  refs.forEach((r, i) => {
    const f = `${at}ddsReferences[${i}]`;
    if (!isObj(r)) {
      errors.push({ field: f, rule: 'must be {id, verificationNumber}' });
      return;
    }
    unknownFields(r, DDS_REFERENCE_FIELDS, `${f}.`, errors);
    if (typeof r['id'] !== 'string' || !DDS_REFERENCE_FORMAT.test(r['id'])) {
      errors.push({
        field: `${f}.id`,
        rule: `a DDS reference: 2-digit year, ISO country, 10 upper-case letters or digits (e.g. 24DKYIGLPU3439), got ${describe(r['id'])}`,
      });
    }
    if (typeof r['verificationNumber'] !== 'string' || !VERIFICATION_NUMBER_FORMAT.test(r['verificationNumber'])) {
      errors.push({
        field: `${f}.verificationNumber`,
        rule: `8 upper-case letters or digits (e.g. 4NAB3QYM), got ${describe(r['verificationNumber'])}`,
      });
    }
  });
}
