import type { Business, BusinessConnection, BusinessInvitation } from '../../schema/upstream.ts';
import * as serviceFacts from '../../schema/upstream/service-facts.ts';
import { contentHash } from './content-hash.ts';
import type { RecordIssue } from './issues.ts';
import type { BusinessRow, ConnectionRow, InvitationRow } from './rows.ts';
import { jsonOrNull, numberOrNull, textOrNull, timestampOrNull, type ValueIssue } from '../../domain/values.ts';
import { findUnstorableFields, type Replacement } from '../../domain/unstorable-text.ts';

/**
 * The supplier and buyer listings → the businesses and connections the warehouse keeps, the calling
 * business's id, and the direct suppliers whose plots the refresh reads. Pure.
 */
export interface Network {
  callerId: string | null;
  businesses: BusinessRow[];
  connections: ConnectionRow[];
  /** Direct suppliers (business ids) with the plotsCount their connection reports. */
  suppliers: Array<{ id: string; plotsCount: number | null }>;
  issues: RecordIssue[];
}

/** The business in every connection; ambiguous with one connection, then the assumed side of the supplier link. */
export function callerOf(
  suppliers: readonly BusinessConnection[],
  buyers: readonly BusinessConnection[],
): string | null {
  const all = [...suppliers, ...buyers];
  let candidates: string[] | null = null;
  for (const c of all) {
    const ids = [c.sourceBusiness?.id, c.targetBusiness?.id].filter((x): x is string => typeof x === 'string');
    candidates = candidates === null ? ids : candidates.filter((id) => ids.includes(id));
  }
  if (candidates && new Set(candidates).size === 1) return candidates[0]!;
  const first = suppliers[0] ?? null;
  if (first) return first[serviceFacts.CALLER_SIDE_OF_SUPPLIER_CONNECTION]?.id ?? null;
  const buyer = buyers[0];
  // In a buyer link the caller supplies, so it is the other side.
  return buyer?.sourceBusiness?.id ?? null;
}

export function toNetwork(suppliers: readonly BusinessConnection[], buyers: readonly BusinessConnection[]): Network {
  const callerId = callerOf(suppliers, buyers);
  const businesses = new Map<string, BusinessRow>();
  const connections: ConnectionRow[] = [];
  const supplierIds: Network['suppliers'] = [];
  const issues: RecordIssue[] = [];
  const listings: Array<[BusinessConnection[] | readonly BusinessConnection[], 'supplier' | 'buyer']> = [
    [suppliers, 'supplier'],
    [buyers, 'buyer'],
  ];
  for (const [list, role] of listings) {
    list.forEach((c, i) => {
      const location = `${role}s #${i}`;
      const source = c.sourceBusiness;
      const target = c.targetBusiness;
      if (!source?.id || !target?.id) {
        issues.push({
          entity: 'business_connections',
          recordId: c.id,
          location,
          field: source?.id ? 'targetBusiness' : 'sourceBusiness',
          rule: 'required: a business with an id',
          action: 'skipped',
        });
        return;
      }
      const partner = source.id === callerId ? target : source;
      const valueIssues: ValueIssue[] = [];
      for (const b of [source, target]) businesses.set(b.id, businessRow(b, b.id === callerId, valueIssues));
      const values: Omit<ConnectionRow, 'content_hash'> = {
        id: c.id,
        source_business_id: source.id,
        target_business_id: target.id,
        partner_business_id: partner.id,
        role,
        plots_count: numberOrNull(c.plotsCount),
        plots_commodities: c.plotsCommodities ?? [],
        custom_data: jsonOrNull(c.customData),
        created_at: timestampOrNull(c.createdAt, 'createdAt', valueIssues),
        updated_at: timestampOrNull(c.updatedAt, 'updatedAt', valueIssues),
      };
      connections.push({ ...values, content_hash: contentHash(values) });
      for (const v of valueIssues)
        issues.push({
          entity: 'business_connections',
          recordId: c.id,
          location,
          field: v.field,
          rule: v.rule,
          action: 'nulled',
        });
      // What is kept of the connection and of both businesses, each path from the connection (sourceBusiness.name).
      const found: Replacement[] = [];
      findUnstorableFields(c as never, CONNECTION_TEXT, '', found);
      findUnstorableFields(source as never, BUSINESS_TEXT, 'sourceBusiness', found);
      findUnstorableFields(target as never, BUSINESS_TEXT, 'targetBusiness', found);
      issues.push(...replacedIssues('business_connections', c.id, location, found));
      if (role === 'supplier' && !supplierIds.some((s) => s.id === partner.id))
        supplierIds.push({ id: partner.id, plotsCount: values.plots_count });
    });
  }
  return { callerId, businesses: [...businesses.values()], connections, suppliers: supplierIds, issues };
}

function businessRow(b: Business, isCaller: boolean, issues: ValueIssue[]): BusinessRow {
  const values: Omit<BusinessRow, 'content_hash'> = {
    id: b.id,
    name: textOrNull(b.name),
    email: textOrNull(b.email),
    username: textOrNull(b.username),
    address_street: textOrNull(b.addressStreet),
    address_zip: textOrNull(b.addressZip),
    address_postcode: textOrNull(b.addressPostcode),
    address_area: textOrNull(b.addressArea),
    address_city: textOrNull(b.addressCity),
    address_country_code: textOrNull(b.addressCountryCode),
    address_country: textOrNull(b.addressCountry),
    address_line1: textOrNull(b.addressLine1),
    address_line2: textOrNull(b.addressLine2),
    eori: textOrNull(b.eori),
    vat: textOrNull(b.vat),
    system_environment: textOrNull(b.systemEnvironment),
    initial_locale: textOrNull(b.initialLocale),
    units: textOrNull(b.units),
    created_at: timestampOrNull(b.createdAt, `business ${b.id} createdAt`, issues),
    updated_at: timestampOrNull(b.updatedAt, `business ${b.id} updatedAt`, issues),
    is_caller: isCaller,
  };
  return { ...values, content_hash: contentHash(values) };
}

export function toInvitationRows(invitations: readonly BusinessInvitation[]): {
  rows: InvitationRow[];
  issues: RecordIssue[];
} {
  const issues: RecordIssue[] = [];
  const rows = invitations.map((inv, i) => {
    const valueIssues: ValueIssue[] = [];
    const values: Omit<InvitationRow, 'content_hash'> = {
      id: inv.id,
      status: textOrNull(inv.status),
      email: textOrNull(inv.email),
      sender_business_id: inv.sentByUser?.businessId ?? inv.sentByUser?.business?.id ?? null,
      business_id: inv.business?.id ?? null,
      source_is_invitee: inv.sourceIsInvitee ?? null,
      custom_data: jsonOrNull(inv.customData),
      created_at: timestampOrNull(inv.createdAt, 'createdAt', valueIssues),
      updated_at: timestampOrNull(inv.updatedAt, 'updatedAt', valueIssues),
    };
    for (const v of valueIssues)
      issues.push({
        entity: 'business_invitations',
        recordId: inv.id,
        location: `#${i}`,
        field: v.field,
        rule: v.rule,
        action: 'nulled',
      });
    const found: Replacement[] = [];
    findUnstorableFields(inv as never, INVITATION_TEXT, '', found);
    findUnstorableFields(inv.sentByUser as never, ['businessId'], 'sentByUser', found);
    findUnstorableFields(inv.sentByUser?.business as never, ['id'], 'sentByUser.business', found);
    findUnstorableFields(inv.business as never, ['id'], 'business', found);
    issues.push(...replacedIssues('business_invitations', inv.id, `#${i}`, found));
    return { ...values, content_hash: contentHash(values) };
  });
  return { rows, issues };
}

/** The members the warehouse keeps as text or JSON (dates are parsed: see timestampOrNull). */
const CONNECTION_TEXT = ['id', 'plotsCommodities', 'customData'];
const BUSINESS_TEXT = [
  'id',
  'name',
  'email',
  'username',
  'addressStreet',
  'addressZip',
  'addressPostcode',
  'addressArea',
  'addressCity',
  'addressCountryCode',
  'addressCountry',
  'addressLine1',
  'addressLine2',
  'eori',
  'vat',
  'systemEnvironment',
  'initialLocale',
  'units',
];
const INVITATION_TEXT = ['id', 'status', 'email', 'customData'];

/** Strings stored with U+FFFD for a NUL or a lone surrogate (domain/unstorable-text.ts) → `replaced` issues. */
function replacedIssues(
  entity: string,
  recordId: string,
  location: string,
  found: readonly Replacement[],
): RecordIssue[] {
  return found.map((r) => ({
    entity,
    recordId,
    location,
    field: r.field,
    rule: r.rule,
    action: 'replaced',
    sent: r.sent,
  }));
}
