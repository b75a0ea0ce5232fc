import { z } from 'zod';
import { customDataResponse, dateTime, opt, openEnum, unsetAsNull, type CustomData, type DateTime, type Open } from './primitives.ts';
import { PlotGeometrySchema, type PlotGeometry, type Polygon } from './geometry.ts';
import { BusinessSchema, type Business } from './parties.ts';
import {
  KNOWN_ANALYSIS_STATUSES, KNOWN_ANALYSIS_TYPES, KNOWN_COMMODITIES, KNOWN_RISK_ASSESSMENT_STATUSES, KNOWN_RISK_LEVELS,
} from '../../activities/api/service-facts.ts';

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

const str = opt(z.string());

export const SpeciesSchema: z.ZodType<Species> = z.looseObject({ scientificName: str, commonName: str });

export const AnalysisSchema: z.ZodType<Analysis> = z.looseObject({
  id: z.string(),
  createdAt: opt(dateTime), updatedAt: opt(dateTime),
  status: opt(openEnum(KNOWN_ANALYSIS_STATUSES)),
  plotId: str, analysedAt: unsetAsNull(dateTime).optional(), version: str,
  deforestedArea: opt(z.number()),
  deforestedGeometry: unsetAsNull(PlotGeometrySchema).optional(),
  riskOfDeforestation: opt(z.number()),
  type: opt(openEnum(KNOWN_ANALYSIS_TYPES)),
  customData: opt(customDataResponse),
  name: str,
});

export const PlotSchema: z.ZodType<Plot> = z.looseObject({
  id: z.string(),
  createdAt: opt(dateTime), updatedAt: opt(dateTime),
  get suppliers() { return opt(z.array(BusinessSchema)); },
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
