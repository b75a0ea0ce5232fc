// Value sets of the service (upstream-facts.md, as schema/upstream/service-facts.ts holds them) and
// plausible geography for generated plots.
import {
  KNOWN_COMMODITIES,
  KNOWN_RISK_ASSESSMENT_STATUSES,
  KNOWN_RISK_LEVELS,
} from '../schema/upstream/service-facts.ts';

export const COMMODITIES = KNOWN_COMMODITIES;
export const RISK_ASSESSMENT_STATUSES = KNOWN_RISK_ASSESSMENT_STATUSES;
export const RISK_LEVELS = KNOWN_RISK_LEVELS;
/** The types generated (OS, also seen at the service, is not). */
export const ANALYSIS_TYPES = ['EUFOROBS', 'PRECISION'] as const;
/** Analysis statuses seen; the first four mean "no result yet" (riskLevel is null then). */
export const ANALYSIS_STATUSES = ['PENDING', 'not started', 'started', 'failed', 'succeeded'] as const;
export const PENDING_ANALYSIS_STATUSES: ReadonlySet<string> = new Set(['PENDING', 'not started', 'started']);

export interface ProducingCountry {
  code: string;
  name: string;
  /**
   * [minLon, maxLon, minLat, maxLat]: a box mostly over agricultural land, and wholly inside the
   * country more than 10 km from its border or coast as Natural Earth 1:10m draws it, so only the odd
   * records are found outside their country (domain/eudr/country-placement.ts).
   */
  box: readonly [number, number, number, number];
  commodities: readonly string[];
  city: string;
}

export const PRODUCING_COUNTRIES: readonly ProducingCountry[] = [
  {
    code: 'BR',
    name: 'Brazil',
    box: [-56, -46, -16, -8],
    commodities: ['cattle', 'soya', 'coffee', 'wood'],
    city: 'Cuiabá',
  },
  {
    code: 'CO',
    name: 'Colombia',
    box: [-76, -73, 2, 6.5],
    commodities: ['coffee', 'cattle', 'oil palm'],
    city: 'Manizales',
  },
  { code: 'PE', name: 'Peru', box: [-77, -74.5, -12, -6], commodities: ['coffee', 'cocoa'], city: 'Tarapoto' },
  {
    code: 'CI',
    name: "Côte d'Ivoire",
    box: [-7, -3.5, 5.5, 8.5],
    commodities: ['cocoa', 'rubber'],
    city: 'San-Pédro',
  },
  { code: 'GH', name: 'Ghana', box: [-2.8, 0, 5.7, 7.5], commodities: ['cocoa'], city: 'Kumasi' },
  {
    code: 'ID',
    name: 'Indonesia',
    box: [110.5, 116, -2.5, 0.5],
    commodities: ['oil palm', 'rubber', 'coffee', 'wood'],
    city: 'Pontianak',
  },
  { code: 'MY', name: 'Malaysia', box: [101.8, 103, 3, 5], commodities: ['oil palm', 'rubber'], city: 'Kuantan' },
  {
    code: 'VN',
    name: 'Vietnam',
    box: [107.8, 108.5, 11.5, 14.5],
    commodities: ['coffee', 'rubber', 'wood'],
    city: 'Buôn Ma Thuột',
  },
  { code: 'ET', name: 'Ethiopia', box: [35.5, 39, 6, 9], commodities: ['coffee'], city: 'Jimma' },
  {
    code: 'CM',
    name: 'Cameroon',
    box: [10.5, 13.5, 3, 5.5],
    commodities: ['cocoa', 'coffee', 'rubber', 'wood'],
    city: 'Ebolowa',
  },
];

export const SPECIES_BY_COMMODITY: Record<string, ReadonlyArray<{ scientificName: string; commonName: string }>> = {
  cattle: [
    { scientificName: 'Bos taurus', commonName: 'Cattle' },
    { scientificName: 'Bos indicus', commonName: 'Zebu' },
  ],
  cocoa: [{ scientificName: 'Theobroma cacao', commonName: 'Cocoa' }],
  coffee: [
    { scientificName: 'Coffea arabica', commonName: 'Arabica coffee' },
    { scientificName: 'Coffea canephora', commonName: 'Robusta coffee' },
  ],
  'oil palm': [{ scientificName: 'Elaeis guineensis', commonName: 'African oil palm' }],
  rubber: [{ scientificName: 'Hevea brasiliensis', commonName: 'Rubber tree' }],
  soya: [{ scientificName: 'Glycine max', commonName: 'Soybean' }],
  wood: [
    { scientificName: 'Tectona grandis', commonName: 'Teak' },
    { scientificName: 'Eucalyptus grandis', commonName: 'Flooded gum' },
  ],
};

export const PLOT_NAME_WORDS = [
  'Fazenda',
  'Finca',
  'Parcela',
  'Plantation',
  'Lot',
  'Champ',
  'Kebun',
  'Estate',
  'Field',
  'Block',
];
export const PLACE_WORDS = [
  'Esperança',
  'Santa Rosa',
  'El Paraíso',
  'Nkwanta',
  'Bukit Hijau',
  'Rio Verde',
  'La Palma',
  'Adjamé',
  'Sungai Emas',
  'Buena Vista',
  'Kpakpa',
  'Dak Lak',
];
export const COMPANY_WORDS = [
  'Agro',
  'Verde',
  'Cacao',
  'Terra',
  'Sol',
  'Palma',
  'Kopi',
  'Selva',
  'Andes',
  'Savanna',
  'Delta',
  'Monte',
];
export const COMPANY_SUFFIXES = ['Ltda', 'S.A.', 'Cooperative', 'Trading', 'Holdings', 'SARL', 'PT', 'Sdn Bhd'];
