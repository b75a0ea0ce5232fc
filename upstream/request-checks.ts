import { z } from 'zod';
import {
  ACTIVITY_TYPES, COMPONENT_UNITS, INVITATION_STATUSES, WEBHOOK_DESCRIPTION_MAX_LENGTH, WEBHOOK_URL_MAX_LENGTH,
} from '../schema/upstream/service-facts.ts';
import { prepareCustomData } from './custom-data.ts';
import { RequestValidationError } from './errors.ts';
import { issuesFrom } from './validate.ts';

/**
 * Request bodies checked before sending, so bad input fails with the field and the rule and
 * never costs a round trip. Unknown extra fields pass through (the service strips what it does
 * not know; the caller may know more than we do). customData follows its own eight rules.
 */

const nonEmpty = z.string().min(1);
const namePair = z.looseObject({ commonName: nonEmpty, scientificName: nonEmpty });
const ddsReference = z.looseObject({ id: nonEmpty, verificationNumber: nonEmpty });

const componentFields = {
  hsn: z.string().regex(/^\d{4,10}$/, 'expected an HS code of 4 to 10 digits (e.g. 1801 or 18010000)'),
  quantity: z.number().positive(),
  unit: z.enum(COMPONENT_UNITS),
  description: z.string().optional(),
  namePairs: z.array(namePair).optional(),
  dateOfProduction: z.string().optional(),
  endDateOfProduction: z.string().optional(),
  supplierBusinessId: nonEmpty.optional(),
  supplierBusinessIds: z.array(nonEmpty).min(1).optional(),
  plotIds: z.array(nonEmpty).optional(),
  ddsReferences: z.array(ddsReference).min(1).optional(),
};

/** A component is either a DDS reference component or an internal supplier component. */
function oneKind(c: { supplierBusinessId?: unknown; supplierBusinessIds?: unknown; ddsReferences?: unknown }): boolean {
  const supplier = c.supplierBusinessId !== undefined || c.supplierBusinessIds !== undefined;
  return supplier !== (c.ddsReferences !== undefined);
}
const kindRule = { message: 'give either ddsReferences (already submitted goods) or supplierBusinessId(s) (internal supplier), not both, not neither' };

export const ComponentInputSchema = z.looseObject(componentFields).refine(oneKind, kindRule);
export const ComponentPatchSchema = z.looseObject(componentFields).partial();

export const CreateTransactionSchema = z.looseObject({
  customId: z.string().min(1).max(255).optional(),
  activityType: z.enum(ACTIVITY_TYPES),
  countryOfActivity: z.string().regex(/^[A-Z]{2}$/, 'expected an ISO 3166 alpha-2 code in upper case'),
  legalEntityId: nonEmpty.optional(),
  components: z.array(ComponentInputSchema).optional(),
  isGeoLocationConfidential: z.boolean().optional(),
  customData: z.unknown().optional(),
});
export const UpdateTransactionSchema = CreateTransactionSchema.omit({ components: true }).partial();

const webhookUrl = z.string().max(WEBHOOK_URL_MAX_LENGTH).refine((u) => {
  try {
    const url = new URL(u);
    // The service wants a host with a TLD: http://127.0.0.1 and http://localhost are refused.
    return (url.protocol === 'https:' || url.protocol === 'http:') && /\.[a-z]{2,}$/i.test(url.hostname);
  } catch {
    return false;
  }
}, 'expected a valid http(s) URL whose host has a TLD');
export const CreateWebhookSchema = z.looseObject({
  url: webhookUrl,
  description: z.string().max(WEBHOOK_DESCRIPTION_MAX_LENGTH).optional(),
  isActive: z.boolean().optional(),
  events: z.array(nonEmpty).optional(),
});
export const UpdateWebhookSchema = CreateWebhookSchema;

export const CreateInvitationSchema = z.looseObject({ email: z.email(), customData: z.unknown().optional() });
export const UpdateInvitationSchema = z.looseObject({ status: z.enum(INVITATION_STATUSES).optional(), customData: z.unknown().optional() });

/** Validates `input` against `schema`, then customData (if present) by its own rules. */
export function checkRequest<S extends z.ZodType>(schema: S, input: unknown, endpoint: string): z.output<S> {
  const result = schema.safeParse(input);
  if (!result.success) throw new RequestValidationError(endpoint, issuesFrom(result.error));
  const data = result.data as Record<string, unknown>;
  if (data['customData'] !== undefined) return { ...data, customData: prepareCustomData(data['customData'], endpoint) } as z.output<S>;
  return data as z.output<S>;
}
