import { z } from 'zod';
import {
  customDataResponse,
  dateTime,
  opt,
  openEnum,
  unsetAsNull,
  type CustomData,
  type DateTime,
  type Open,
} from './primitives.ts';
import {
  ACTIVITY_TYPES,
  COMPONENT_UNITS,
  KNOWN_TRANSACTION_STATUSES,
  TRANSACTION_REFERENCE_FIELD,
  TRANSACTION_VERIFICATION_FIELD,
} from './service-facts.ts';

/**
 * Transactions and components. The contract shows concepts only; field names come from
 * upstream-facts.md (see schema/upstream/service-facts.ts for which are assumed). A status the
 * client does not know is kept as text: it must be stored and shown, never crash a workflow.
 */

export type ActivityType = (typeof ACTIVITY_TYPES)[number];
export type ComponentUnit = (typeof COMPONENT_UNITS)[number];
export type TransactionStatus = Open<(typeof KNOWN_TRANSACTION_STATUSES)[number]>;

export interface DdsReference {
  id: string;
  verificationNumber: string;
}
export interface NamePair {
  commonName: string;
  scientificName: string;
}

/** Fields shared by both kinds of component, as sent. */
interface ComponentCommonInput {
  /** HS code as digits, e.g. `1801` or `18010000`. */
  hsn: string;
  quantity: number;
  unit: ComponentUnit;
  description?: string;
  namePairs?: NamePair[];
  dateOfProduction?: string;
  endDateOfProduction?: string;
}
/** Goods not yet submitted, identified by their supplier (plots of it and its upstream). */
export interface SupplierComponentInput extends ComponentCommonInput {
  supplierBusinessId?: string;
  supplierBusinessIds?: string[];
  plotIds?: string[];
}
/** Goods already submitted, referenced by DDS reference and verification number. */
export interface DdsReferenceComponentInput extends ComponentCommonInput {
  ddsReferences: DdsReference[];
}
export type ComponentInput = SupplierComponentInput | DdsReferenceComponentInput;

export interface CreateTransactionInput {
  /** Ours to set: the only handle to find the transaction again after a lost response. */
  customId?: string;
  activityType: ActivityType;
  /** ISO 3166 alpha-2. */
  countryOfActivity: string;
  legalEntityId?: string;
  components?: ComponentInput[];
  isGeoLocationConfidential?: boolean;
  customData?: Record<string, string | number | boolean>;
}
export type UpdateTransactionInput = Partial<Omit<CreateTransactionInput, 'components'>>;

export interface Component {
  id: string;
  hsn?: string | null;
  quantity?: number | null;
  unit?: Open<ComponentUnit> | null;
  description?: string | null;
  supplierBusinessId?: string | null;
  ddsReferences?: Array<{ id?: string | null; verificationNumber?: string | null }> | null;
  createdAt?: DateTime | null;
  updatedAt?: DateTime | null;
}

export interface Transaction {
  id: string;
  customId?: string | null;
  status: TransactionStatus;
  activityType?: Open<ActivityType> | null;
  countryOfActivity?: string | null;
  legalEntityId?: string | null;
  /** DDS reference; null until the EU system validated the transaction. */
  referenceNumber?: string | null;
  verificationNumber?: string | null;
  isGeoLocationConfidential?: boolean | null;
  components?: Component[] | null;
  customData?: CustomData | null;
  createdAt?: DateTime | null;
  updatedAt?: DateTime | null;
}

const str = opt(z.string());
// hsn may come back as a number from some serialisers: keep it as text (leading zeros matter).
const hsn = z.union([z.string(), z.number().transform(String)]).nullish();

export const ComponentSchema: z.ZodType<Component> = z.looseObject({
  id: z.string(),
  hsn,
  quantity: opt(z.number()),
  unit: opt(openEnum(COMPONENT_UNITS)),
  description: str,
  supplierBusinessId: str,
  ddsReferences: opt(z.array(z.looseObject({ id: str, verificationNumber: str }))),
  createdAt: opt(dateTime),
  updatedAt: opt(dateTime),
});

/**
 * The DDS reference and verification number arrive under field names we only assume
 * (service-facts.ts); they are read from there into `referenceNumber` / `verificationNumber`.
 */
function withReferenceFields(v: unknown): unknown {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
  const o = v as Record<string, unknown>;
  if (TRANSACTION_REFERENCE_FIELD === 'referenceNumber' && TRANSACTION_VERIFICATION_FIELD === 'verificationNumber')
    return o;
  return {
    ...o,
    referenceNumber: o[TRANSACTION_REFERENCE_FIELD],
    verificationNumber: o[TRANSACTION_VERIFICATION_FIELD],
  };
}

export const TransactionSchema: z.ZodType<Transaction> = z.preprocess(
  withReferenceFields,
  z.looseObject({
    id: z.string(),
    customId: str,
    status: openEnum(KNOWN_TRANSACTION_STATUSES),
    activityType: opt(openEnum(ACTIVITY_TYPES)),
    countryOfActivity: str,
    legalEntityId: str,
    referenceNumber: unsetAsNull(z.string()).optional(),
    verificationNumber: unsetAsNull(z.string()).optional(),
    isGeoLocationConfidential: opt(z.boolean()),
    components: opt(z.array(ComponentSchema)),
    customData: opt(customDataResponse),
    createdAt: opt(dateTime),
    updatedAt: opt(dateTime),
  }),
);
