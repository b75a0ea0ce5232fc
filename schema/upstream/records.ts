import { z } from 'zod';
import {
  customDataResponse,
  dateTime,
  flag,
  opt,
  openEnum,
  unsetAsNull,
  type CustomData,
  type DateTime,
  type Open,
} from './primitives.ts';
import { PlotGeometrySchema, type PlotGeometry, type Polygon } from './geometry.ts';
import {
  KNOWN_ANALYSIS_STATUSES,
  KNOWN_ANALYSIS_TYPES,
  KNOWN_COMMODITIES,
  KNOWN_RISK_ASSESSMENT_STATUSES,
  KNOWN_RISK_LEVELS,
} from './service-facts.ts';

/*
 * The service's records that embed one another (a business lists its plots, a plot its supplier
 * businesses): one module, since their schemas refer to each other.
 */
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
  canTriggerPrecisionAnalysis: bool,
  canManageTransactions: bool,
  canViewSurveyResponsesOfTier1Suppliers: bool,
  canDownloadSurveyResponses: bool,
  canManageWebhooks: bool,
  canAccessApi: bool,
  canManageCmsSupplierRiskAssessmentStatuses: bool,
  canViewCmsSurveys: bool,
  canViewSupplierRiskScore: bool,
});

const str = opt(z.string());
export const BusinessSchema: z.ZodType<Business> = z.looseObject({
  id: z.string(),
  email: str,
  name: str,
  username: str,
  addressStreet: str,
  addressZip: str,
  addressPostcode: str,
  addressArea: str,
  addressCity: str,
  addressCountryCode: str,
  addressCountry: str,
  addressLine1: str,
  addressLine2: str,
  createdAt: opt(dateTime),
  updatedAt: opt(dateTime),
  initialLocale: str,
  units: str,
  get plots() {
    return opt(z.array(PlotSchema));
  },
  newlyCreated: opt(flag),
  get members() {
    return opt(z.array(UserSchema));
  },
  get connectionsAsSource() {
    return opt(z.array(BusinessConnectionSchema));
  },
  get connectionsAsTarget() {
    return opt(z.array(BusinessConnectionSchema));
  },
  get businessInvitations() {
    return opt(z.array(BusinessInvitationSchema));
  },
  get contactPerson() {
    return unsetAsNull(UserSchema).optional();
  },
  machineToMachineClientId: str,
  eori: str,
  vat: str,
  systemEnvironment: opt(openEnum(['ACCEPTANCE'])),
});

export const UserSchema: z.ZodType<User> = z.looseObject({
  idpUserId: str,
  get business() {
    return unsetAsNull(BusinessSchema).optional();
  },
  businessId: str,
  firstName: str,
  lastName: str,
  locale: str,
  createdAt: opt(dateTime),
  updatedAt: opt(dateTime),
  completed: opt(flag),
  get businessInvitations() {
    return opt(z.array(BusinessInvitationSchema));
  },
  get userInvitations() {
    return opt(z.array(UserInvitationSchema));
  },
  email: str,
  consentedAt: opt(dateTime),
  entitlements: unsetAsNull(EntitlementsSchema).optional(),
});

export const UserInvitationSchema: z.ZodType<UserInvitation> = z.looseObject({
  id: z.string(),
  email: str,
  get sentByUser() {
    return unsetAsNull(UserSchema).optional();
  },
  get inviteToBusiness() {
    return unsetAsNull(BusinessSchema).optional();
  },
  status: opt(openEnum(['ACCEPTED'])),
  createdAt: opt(dateTime),
  updatedAt: opt(dateTime),
});

export const BusinessInvitationSchema: z.ZodType<BusinessInvitation> = z.looseObject({
  id: z.string(),
  get sentByUser() {
    return unsetAsNull(UserSchema).optional();
  },
  get business() {
    return unsetAsNull(BusinessSchema).optional();
  },
  email: str,
  status: opt(openEnum(['PENDING', 'ACCEPTED', 'REJECTED', 'CANCELLED'])),
  createdAt: opt(dateTime),
  updatedAt: opt(dateTime),
  sourceIsInvitee: opt(flag),
  customData: opt(customDataResponse),
});

export const BusinessConnectionSchema: z.ZodType<BusinessConnection> = z.looseObject({
  id: z.string(),
  get sourceBusiness() {
    return unsetAsNull(BusinessSchema).optional();
  },
  get targetBusiness() {
    return unsetAsNull(BusinessSchema).optional();
  },
  createdAt: opt(dateTime),
  updatedAt: opt(dateTime),
  customData: opt(customDataResponse),
  plotsCount: opt(z.number()),
  plotsCommodities: opt(z.array(z.string())),
});

/** Plots, their analyses and species. Value sets are open: unknown strings pass through. */

export type Commodity = Open<(typeof KNOWN_COMMODITIES)[number]>;
export type RiskAssessmentStatus = Open<(typeof KNOWN_RISK_ASSESSMENT_STATUSES)[number]>;
export type RiskLevel = Open<(typeof KNOWN_RISK_LEVELS)[number]>;
export type AnalysisType = Open<(typeof KNOWN_ANALYSIS_TYPES)[number]>;
export type AnalysisStatus = Open<(typeof KNOWN_ANALYSIS_STATUSES)[number]>;

export interface Species {
  scientificName?: string | null;
  commonName?: string | null;
}

export interface Analysis {
  id: string;
  createdAt?: DateTime | null;
  updatedAt?: DateTime | null;
  status?: AnalysisStatus | null;
  plotId?: string | null;
  analysedAt?: DateTime | null;
  version?: string | null;
  /** Square metres. */
  deforestedArea?: number | null;
  deforestedGeometry?: Polygon | PlotGeometry | null;
  /** 0..1. */
  riskOfDeforestation?: number | null;
  type?: AnalysisType | null;
  /** Omitted in plot lists. */
  customData?: CustomData | null;
  /** Omitted in plot lists. */
  name?: string | null;
}

export interface Plot {
  id: string;
  createdAt?: DateTime | null;
  updatedAt?: DateTime | null;
  suppliers?: Business[] | null;
  geometry?: PlotGeometry | null;
  commodities?: Commodity[] | null;
  name?: string | null;
  /** Surface area in SQUARE METRES, as the service sends it (filter.areaHa is in hectares). */
  surfaceArea?: number | null;
  countryCode?: string | null;
  mostRecentAnalysis?: Analysis | null;
  /** Keyed by analysis kind (EUFOROBS, PRECISION, ...). */
  mostRecentAnalysesByType?: Record<string, Analysis | null> | null;
  riskAssessmentStatus?: RiskAssessmentStatus | null;
  /** null while the analysis is pending. */
  riskLevel?: RiskLevel | null;
  species?: Species[] | null;
  /** Date text; `{}` in the contract when unset, null here. */
  productionDateStart?: string | null;
  productionDateEnd?: string | null;
  /** `{}` in the contract when unset, null here. */
  filename?: string | null;
  description?: string | null;
  ownerId?: string | null;
  customData?: CustomData | null;
}

export const SpeciesSchema: z.ZodType<Species> = z.looseObject({ scientificName: str, commonName: str });

export const AnalysisSchema: z.ZodType<Analysis> = z.looseObject({
  id: z.string(),
  createdAt: opt(dateTime),
  updatedAt: opt(dateTime),
  status: opt(openEnum(KNOWN_ANALYSIS_STATUSES)),
  plotId: str,
  analysedAt: unsetAsNull(dateTime).optional(),
  version: str,
  deforestedArea: opt(z.number()),
  deforestedGeometry: unsetAsNull(PlotGeometrySchema).optional(),
  riskOfDeforestation: opt(z.number()),
  type: opt(openEnum(KNOWN_ANALYSIS_TYPES)),
  customData: opt(customDataResponse),
  name: str,
});

export const PlotSchema: z.ZodType<Plot> = z.looseObject({
  id: z.string(),
  createdAt: opt(dateTime),
  updatedAt: opt(dateTime),
  get suppliers() {
    return opt(z.array(BusinessSchema));
  },
  geometry: unsetAsNull(PlotGeometrySchema).optional(),
  commodities: opt(z.array(openEnum(KNOWN_COMMODITIES))),
  name: str,
  surfaceArea: opt(z.number()),
  countryCode: str,
  mostRecentAnalysis: unsetAsNull(AnalysisSchema).optional(),
  mostRecentAnalysesByType: unsetAsNull(z.record(z.string(), unsetAsNull(AnalysisSchema))).optional(),
  riskAssessmentStatus: opt(openEnum(KNOWN_RISK_ASSESSMENT_STATUSES)),
  riskLevel: opt(openEnum(KNOWN_RISK_LEVELS)),
  species: opt(z.array(SpeciesSchema)),
  productionDateStart: unsetAsNull(z.string()).optional(),
  productionDateEnd: unsetAsNull(z.string()).optional(),
  filename: unsetAsNull(z.string()).optional(),
  description: str,
  ownerId: str,
  customData: opt(customDataResponse),
});

/** A plot of a page that did not match: left out, reported with where and why. */
export interface InvalidRecord {
  index: number;
  id: string | null;
  path: string;
  message: string;
}
