import { z } from 'zod';
import { customDataResponse, dateTime, flag, opt, openEnum, unsetAsNull, type CustomData, type DateTime, type Open } from './primitives.ts';
import { PlotSchema, type Plot } from './plots.ts';

/**
 * Businesses, users and the links between them (contract: Business, User, User invitation,
 * Business invitation, Business connection). Relations nest each other, so the schemas refer
 * to one another through getters (evaluated at parse time, not at module load).
 * Every field but `id` may be absent: relations and `select` decide what the service sends.
 */

export interface Entitlements {
  canTriggerPrecisionAnalysis?: boolean | null;
  canManageTransactions?: boolean | null;
  canViewSurveyResponsesOfTier1Suppliers?: boolean | null;
  canDownloadSurveyResponses?: boolean | null;
  canManageWebhooks?: boolean | null;
  canAccessApi?: boolean | null;
  canManageCmsSupplierRiskAssessmentStatuses?: boolean | null;
  canViewCmsSurveys?: boolean | null;
  canViewSupplierRiskScore?: boolean | null;
}

export interface Business {
  id: string;
  email?: string | null;
  name?: string | null;
  username?: string | null;
  addressStreet?: string | null;
  addressZip?: string | null;
  addressPostcode?: string | null;
  addressArea?: string | null;
  addressCity?: string | null;
  addressCountryCode?: string | null;
  addressCountry?: string | null;
  addressLine1?: string | null;
  addressLine2?: string | null;
  createdAt?: DateTime | null;
  updatedAt?: DateTime | null;
  initialLocale?: string | null;
  units?: string | null;
  plots?: Plot[] | null;
  /** Text flag in the contract; a boolean here. */
  newlyCreated?: boolean | null;
  members?: User[] | null;
  connectionsAsSource?: BusinessConnection[] | null;
  connectionsAsTarget?: BusinessConnection[] | null;
  businessInvitations?: BusinessInvitation[] | null;
  /** `{}` in the contract when unset; null here. */
  contactPerson?: User | null;
  machineToMachineClientId?: string | null;
  eori?: string | null;
  vat?: string | null;
  systemEnvironment?: Open<'ACCEPTANCE'> | null;
}

export interface User {
  idpUserId?: string | null;
  business?: Business | null;
  businessId?: string | null;
  firstName?: string | null;
  lastName?: string | null;
  locale?: string | null;
  createdAt?: DateTime | null;
  updatedAt?: DateTime | null;
  /** Text flag in the contract; a boolean here. */
  completed?: boolean | null;
  businessInvitations?: BusinessInvitation[] | null;
  userInvitations?: UserInvitation[] | null;
  email?: string | null;
  consentedAt?: DateTime | null;
  entitlements?: Entitlements | null;
}

export interface UserInvitation {
  id: string;
  email?: string | null;
  sentByUser?: User | null;
  inviteToBusiness?: Business | null;
  status?: Open<'ACCEPTED'> | null;
  createdAt?: DateTime | null;
  updatedAt?: DateTime | null;
}

export type InvitationStatus = Open<'PENDING' | 'ACCEPTED' | 'REJECTED' | 'CANCELLED'>;

export interface BusinessInvitation {
  id: string;
  sentByUser?: User | null;
  business?: Business | null;
  email?: string | null;
  status?: InvitationStatus | null;
  createdAt?: DateTime | null;
  updatedAt?: DateTime | null;
  /** Text flag in the contract: whether the invited business shares (true) or receives data. */
  sourceIsInvitee?: boolean | null;
  customData?: CustomData | null;
}

export interface BusinessConnection {
  id: string;
  sourceBusiness?: Business | null;
  targetBusiness?: Business | null;
  createdAt?: DateTime | null;
  updatedAt?: DateTime | null;
  customData?: CustomData | null;
  plotsCount?: number | null;
  plotsCommodities?: string[] | null;
}

const bool = opt(z.boolean());
export const EntitlementsSchema: z.ZodType<Entitlements> = z.looseObject({
  canTriggerPrecisionAnalysis: bool, canManageTransactions: bool, canViewSurveyResponsesOfTier1Suppliers: bool,
  canDownloadSurveyResponses: bool, canManageWebhooks: bool, canAccessApi: bool,
  canManageCmsSupplierRiskAssessmentStatuses: bool, canViewCmsSurveys: bool, canViewSupplierRiskScore: bool,
});

const str = opt(z.string());
export const BusinessSchema: z.ZodType<Business> = z.looseObject({
  id: z.string(),
  email: str, name: str, username: str,
  addressStreet: str, addressZip: str, addressPostcode: str, addressArea: str, addressCity: str,
  addressCountryCode: str, addressCountry: str, addressLine1: str, addressLine2: str,
  createdAt: opt(dateTime), updatedAt: opt(dateTime),
  initialLocale: str, units: str,
  get plots() { return opt(z.array(PlotSchema)); },
  newlyCreated: opt(flag),
  get members() { return opt(z.array(UserSchema)); },
  get connectionsAsSource() { return opt(z.array(BusinessConnectionSchema)); },
  get connectionsAsTarget() { return opt(z.array(BusinessConnectionSchema)); },
  get businessInvitations() { return opt(z.array(BusinessInvitationSchema)); },
  get contactPerson() { return unsetAsNull(UserSchema).optional(); },
  machineToMachineClientId: str, eori: str, vat: str,
  systemEnvironment: opt(openEnum(['ACCEPTANCE'])),
});

export const UserSchema: z.ZodType<User> = z.looseObject({
  idpUserId: str,
  get business() { return unsetAsNull(BusinessSchema).optional(); },
  businessId: str, firstName: str, lastName: str, locale: str,
  createdAt: opt(dateTime), updatedAt: opt(dateTime),
  completed: opt(flag),
  get businessInvitations() { return opt(z.array(BusinessInvitationSchema)); },
  get userInvitations() { return opt(z.array(UserInvitationSchema)); },
  email: str, consentedAt: opt(dateTime),
  entitlements: unsetAsNull(EntitlementsSchema).optional(),
});

export const UserInvitationSchema: z.ZodType<UserInvitation> = z.looseObject({
  id: z.string(), email: str,
  get sentByUser() { return unsetAsNull(UserSchema).optional(); },
  get inviteToBusiness() { return unsetAsNull(BusinessSchema).optional(); },
  status: opt(openEnum(['ACCEPTED'])),
  createdAt: opt(dateTime), updatedAt: opt(dateTime),
});

export const BusinessInvitationSchema: z.ZodType<BusinessInvitation> = z.looseObject({
  id: z.string(),
  get sentByUser() { return unsetAsNull(UserSchema).optional(); },
  get business() { return unsetAsNull(BusinessSchema).optional(); },
  email: str,
  status: opt(openEnum(['PENDING', 'ACCEPTED', 'REJECTED', 'CANCELLED'])),
  createdAt: opt(dateTime), updatedAt: opt(dateTime),
  sourceIsInvitee: opt(flag),
  customData: opt(customDataResponse),
});

export const BusinessConnectionSchema: z.ZodType<BusinessConnection> = z.looseObject({
  id: z.string(),
  get sourceBusiness() { return unsetAsNull(BusinessSchema).optional(); },
  get targetBusiness() { return unsetAsNull(BusinessSchema).optional(); },
  createdAt: opt(dateTime), updatedAt: opt(dateTime),
  customData: opt(customDataResponse),
  plotsCount: opt(z.number()),
  plotsCommodities: opt(z.array(z.string())),
});
