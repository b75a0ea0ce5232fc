import { z } from 'zod';
import type { RuleIssue } from '../schema/upstream/rule-issue.ts';
import {
  ACTIVITY_TYPES,
  COMPONENT_UNITS,
  CUSTOM_ID_MAX_LENGTH,
  INVITATION_STATUSES,
  WEBHOOK_DESCRIPTION_MAX_LENGTH,
} from '../schema/upstream/service-facts.ts';
import {
  componentKindIssues,
  countryOfActivityIssues,
  hsCodeIssues,
  quantityIssues,
} from '../schema/upstream/transaction-rules.ts';
import { webhookUrlIssues } from '../schema/upstream/webhook-rules.ts';
import { prepareCustomData } from './custom-data.ts';
import { RequestValidationError } from './errors.ts';
import { issuesFrom } from './validate.ts';

/**
 * Request bodies checked before sending, so bad input fails with the field and the rule and
 * never costs a round trip. Unknown extra fields pass through (the service strips what it does
 * not know; the caller may know more than we do). customData follows its own eight rules.
 */

const nonEmpty = z.string().min(1);

/** A rule of schema/upstream/ as a zod refinement: its issues at the value's own path (or below it). */
function rule<T>(issuesOf: (value: T) => RuleIssue[]) {
  return (value: T, ctx: z.core.$RefinementCtx<T>): void => {
    for (const i of issuesOf(value))
      ctx.addIssue({ code: 'custom', message: i.message, path: i.path === '' ? [] : i.path.split('.') });
  };
}
const namePair = z.looseObject({ commonName: nonEmpty, scientificName: nonEmpty });
const ddsReference = z.looseObject({ id: nonEmpty, verificationNumber: nonEmpty });

const componentFields = {
  hsn: z.string().superRefine(rule((v) => hsCodeIssues(v, ''))),
  quantity: z.number().superRefine(rule((v) => quantityIssues(v, ''))),
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

export const ComponentInputSchema = z.looseObject(componentFields).superRefine(rule((c) => componentKindIssues(c, '')));
export const ComponentPatchSchema = z
  .looseObject(componentFields)
  .partial()
  .superRefine(rule((c) => componentKindIssues(c, '', true)));

export const CreateTransactionSchema = z.looseObject({
  customId: z.string().min(1).max(CUSTOM_ID_MAX_LENGTH).optional(),
  activityType: z.enum(ACTIVITY_TYPES),
  countryOfActivity: z.string().superRefine(rule((v) => countryOfActivityIssues(v, ''))),
  legalEntityId: nonEmpty.optional(),
  components: z.array(ComponentInputSchema).optional(),
  isGeoLocationConfidential: z.boolean().optional(),
  customData: z.unknown().optional(),
});
export const UpdateTransactionSchema = CreateTransactionSchema.omit({ components: true }).partial();

export const CreateWebhookSchema = z.looseObject({
  url: z.string().superRefine(rule((v) => webhookUrlIssues(v, ''))),
  description: z.string().max(WEBHOOK_DESCRIPTION_MAX_LENGTH).optional(),
  isActive: z.boolean().optional(),
  events: z.array(nonEmpty).optional(),
});
export const UpdateWebhookSchema = CreateWebhookSchema;

export const CreateInvitationSchema = z.looseObject({ email: z.email(), customData: z.unknown().optional() });
export const UpdateInvitationSchema = z.looseObject({
  status: z.enum(INVITATION_STATUSES).optional(),
  customData: z.unknown().optional(),
});

/** Validates `input` against `schema`, then customData (if present) by its own rules. */
export function checkRequest<S extends z.ZodType>(schema: S, input: unknown, endpoint: string): z.output<S> {
  const result = schema.safeParse(input);
  if (!result.success) throw new RequestValidationError(endpoint, issuesFrom(result.error));
  const data = result.data as Record<string, unknown>;
  if (data['customData'] !== undefined)
    return { ...data, customData: prepareCustomData(data['customData'], endpoint) } as z.output<S>;
  return data as z.output<S>;
}
