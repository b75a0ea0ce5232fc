/**
 * Every choice the API layer makes about the live service where upstream-api.md is silent,
 * taken from /work/shared/upstream-facts.md. Each constant says whether the fact is
 * KNOWN (documented by the service) or ASSUMED (our best reading). When reality differs,
 * correct the value here: nothing else in the code hard-codes these.
 */

/** Paths of every endpoint, as templates with `{name}` placeholders. Used for errors, logs, stats. */
export const PATHS = {
  token: '/auth/machine-to-machine-clients/token', // contract
  surveyResponsePdf: '/survey-responses/{id}/pdf', // contract
  ownPlots: '/plots', // contract
  supplierPlots: '/businesses/{businessId}/plots', // contract
  transactions: '/transactions', // contract (POST); GET list KNOWN
  transaction: '/transactions/{id}', // contract (GET, PATCH); DELETE ASSUMED path
  transactionSubmit: '/transactions/{id}/submit', // contract
  transactionComponents: '/transactions/{id}/components', // KNOWN
  component: '/components/{id}', // KNOWN (PATCH); DELETE ASSUMED path. Not under /transactions.
  suppliers: '/business-connections/suppliers', // KNOWN
  buyers: '/business-connections/buyers', // KNOWN
  connection: '/business-connections/{id}', // KNOWN
  invitations: '/business-invitations', // KNOWN (GET, POST)
  invitation: '/business-invitations/{id}', // contract
  webhooks: '/webhooks',
  webhook: '/webhooks/{id}',
  webhookEvents: '/webhooks/events',
  webhookStats: '/webhooks/{id}/stats',
  webhookAttempts: '/webhooks/{id}/attempts',
  webhookSendExample: '/webhooks/{id}/send-example',
  webhookSecret: '/webhooks/{id}/secret',
} as const;

export type PathTemplate = (typeof PATHS)[keyof typeof PATHS];

/** Page size: contract default 100, max 500; a larger value is served as 500 (contract). */
export const PLOT_PAGE_MAX_LIMIT = 500;
/** ddsync reads full pages: fewer round trips for the refresh. */
export const PLOT_PAGE_DEFAULT_LIMIT = 500;
// Lists are plain arrays without total or next link (KNOWN): the page-size stop rule lives in
// page-rule.ts. An invalid `page` is served as page 1 (contract): plot-query.ts never sends one.

/**
 * Answers of the token endpoint that refuse the client credentials: 401 (contract: invalid
 * credentials), 400 and 403 ASSUMED (malformed or disabled client). Final for the process.
 */
export const TOKEN_REFUSAL_STATUSES: ReadonlySet<number> = new Set([400, 401, 403]);
// A 401 anywhere else refuses the token, not the credentials (contract: "an expired token yields
// 401; the caller then authenticates again"), and ASSUMED: authentication precedes any work, so the
// request was not processed and any method, POST included, may be sent again with a fresh token.

/** Token lifetime when the token response omits expires_in (contract: 86400 s). */
export const DEFAULT_TOKEN_LIFETIME_S = 86_400;

/**
 * customData keys the service owns. Rule 6 says such keys are ignored on input; the contract
 * does not name them. ASSUMED: keys starting with `_` or `$` are server namespaces. We strip them
 * before sending (the server would drop them anyway) and never count them against rule 1.
 */
export const RESERVED_CUSTOM_DATA_KEY = /^[_$]/;
/** Rule 5 of the contract (KNOWN). Refused, never stripped: they signal hostile or broken input. */
export const FORBIDDEN_CUSTOM_DATA_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);
export const CUSTOM_DATA_MAX_KEYS = 10;
export const CUSTOM_DATA_MAX_KEY_LENGTH = 255;
export const CUSTOM_DATA_MAX_STRING_LENGTH = 255;
// customData rule 7 (responses unchanged) and rule 8 (visible only to the record's owners) are
// the server's: nothing to enforce client-side. See custom-data.ts.

/** Open value sets: these are the values known today; any other string must pass through. */
export const KNOWN_RISK_ASSESSMENT_STATUSES = [
  'NEW',
  'UNDER_REVIEW',
  'IN_RISK_MITIGATION',
  'EUDR_COMPLIANT',
  'EUDR_NON_COMPLIANT',
] as const;
export const KNOWN_RISK_LEVELS = ['high', 'medium', 'low', 'none'] as const;
export const KNOWN_ANALYSIS_TYPES = ['EUFOROBS', 'PRECISION', 'OS'] as const;
export const KNOWN_ANALYSIS_STATUSES = ['PENDING', 'not started', 'started', 'succeeded', 'failed'] as const;
export const KNOWN_COMMODITIES = ['cattle', 'cocoa', 'coffee', 'oil palm', 'rubber', 'soya', 'wood'] as const;
/** Transaction statuses. AVAILABLE is an ASSUMED name; unknown statuses are stored, never fatal. */
export const KNOWN_TRANSACTION_STATUSES = [
  'DRAFT',
  'TO_SUBMIT',
  'SUBMITTED',
  'AVAILABLE',
  'ERROR',
  'WITHDRAWN',
] as const;
export const ACTIVITY_TYPES = ['IMPORT', 'EXPORT', 'TRADE', 'DOMESTIC'] as const; // contract: closed enum
export const COMPONENT_UNITS = ['LTR', 'MTR', 'MTRSQR', 'MTRCUBE', 'KGM', 'TNE', 'PCS', 'PR', 'SET', 'PKG'] as const; // KNOWN
export const INVITATION_STATUSES = ['PENDING', 'ACCEPTED', 'REJECTED', 'CANCELLED'] as const; // contract
/** `includes` of GET /transactions (KNOWN). */
export const TRANSACTION_INCLUDES = ['components', 'components.ddsReferences'] as const;

/** `includes` of GET /businesses/{businessId}/plots (contract) and the only combinations allowed. */
export const PLOT_RELATIONS = [
  'minimumAnalysisResults',
  'mostRecentAnalysesByType',
  'mostRecentAnalysis',
  'riskAssessmentStatus',
  'riskLevel',
  'suppliers',
] as const;
export const PLOT_RELATION_PAIRS: ReadonlyArray<readonly [string, string]> = [
  ['mostRecentAnalysis', 'mostRecentAnalysesByType'],
  ['minimumAnalysisResults', 'riskLevel'],
];
/** filter.* fields and their allowed operations (contract). Format `{$not:}OPERATION:VALUE`. */
export const PLOT_FILTER_OPERATIONS = {
  commodities: ['$contains'],
  countryCode: ['$eq'],
  riskAssessmentStatus: ['$eq'],
  areaHa: ['$gte', '$lte'],
} as const;

/** Webhook input limits (contract). */
export const WEBHOOK_URL_MAX_LENGTH = 2048;
export const WEBHOOK_DESCRIPTION_MAX_LENGTH = 1000;

/** DDS reference and verification number on the transaction record (ASSUMED field names; read into
 *  Transaction.referenceNumber / verificationNumber whatever they are called upstream). */
export const TRANSACTION_REFERENCE_FIELD: string = 'referenceNumber';
export const TRANSACTION_VERIFICATION_FIELD: string = 'verificationNumber';

/**
 * Statuses that mean "the request was not processed": safe to retry for every method, POST
 * included. ASSUMED: no rate limit is documented; 429 and 503 are refused before any work.
 */
export const RETRY_ANY_METHOD_STATUSES: ReadonlySet<number> = new Set([429, 503]);

/**
 * Answers that prove a request was not applied, POST included. ASSUMED: the service authenticates
 * (401), authorises (403), validates (400, 422) and checks for conflicts (409) before it acts, and
 * refuses 429 and 503 before any work. Another 5xx, a timeout or a lost response proves nothing.
 */
export const NOT_APPLIED_STATUSES: ReadonlySet<number> = new Set([
  400,
  401,
  403,
  409,
  422,
  ...RETRY_ANY_METHOD_STATUSES,
]);

/**
 * Which side of a connection is the calling business. KNOWN: the supplier is the side that is not the
 * caller. The caller is therefore the business present in every connection of both listings; when
 * that is ambiguous (a single connection), ASSUMED: in the suppliers listing the caller is the target
 * (the source shares data, like an invitation's `sourceIsInvitee`).
 */
export const CALLER_SIDE_OF_SUPPLIER_CONNECTION = 'targetBusiness' as const;

/**
 * countryOfActivity is an EU country for every activity type (contract: the country of entry into
 * or exit from the EU, or the EU country where goods are sourced, produced or made available).
 * KNOWN rule; the list is the EU's 27 member states (ISO 3166-1 alpha-2) plus XI (Northern Ireland,
 * where the regulation applies): ASSUMED to be what the service accepts.
 */
export const EU_COUNTRY_CODES: ReadonlySet<string> = new Set([
  'AT',
  'BE',
  'BG',
  'CY',
  'CZ',
  'DE',
  'DK',
  'EE',
  'ES',
  'FI',
  'FR',
  'GR',
  'HR',
  'HU',
  'IE',
  'IT',
  'LT',
  'LU',
  'LV',
  'MT',
  'NL',
  'PL',
  'PT',
  'RO',
  'SE',
  'SI',
  'SK',
  'XI',
]);

/**
 * HS chapters of the commodities in scope (upstream-facts: cattle 01/02/41, cocoa 18, coffee 09,
 * oil palm 15, rubber 40, soya 12/15/23, wood 44/47/48/94). KNOWN list; refusing a component outside
 * it before sending is ASSUMED to match the service (which would otherwise reject or ignore it).
 */
export const COMMODITY_HS_CHAPTERS: ReadonlySet<string> = new Set([
  '01',
  '02',
  '09',
  '12',
  '15',
  '18',
  '23',
  '40',
  '41',
  '44',
  '47',
  '48',
  '94',
]);
/**
 * An HS code as the service takes it: digits (KNOWN, e.g. `1801` or `18010000`), 4, 6, 8 or 10 of them
 * (ASSUMED: the levels of the nomenclature, heading, subheading, CN and TARIC code; a 5-digit code is
 * none of them). Checked with the chapter by hsCodeIssues (transaction-rules.ts).
 */
export const HS_CODE_FORMAT = /^(\d{4}|\d{6}|\d{8}|\d{10})$/;

/** DDS reference: two-digit year, ISO country, 10 upper-case alphanumerics (KNOWN format, e.g. 24DKYIGLPU3439). */
export const DDS_REFERENCE_FORMAT = /^\d{2}[A-Z]{2}[A-Z0-9]{10}$/;
/** Verification number: 8 upper-case alphanumerics (KNOWN format, e.g. 4NAB3QYM). */
export const VERIFICATION_NUMBER_FORMAT = /^[A-Z0-9]{8}$/;
/** customId: ASSUMED at most 255 characters, like other free text of the service. */
export const CUSTOM_ID_MAX_LENGTH = 255;
/** Why the EU system rejected a transaction: ASSUMED field `errorReason` on the transaction record. */
export const TRANSACTION_ERROR_REASON_FIELD: string = 'errorReason';
/** Statuses after which a transaction changes no more. AVAILABLE is an assumed name (see above). */
export const FINAL_TRANSACTION_STATUSES: ReadonlySet<string> = new Set(['AVAILABLE', 'ERROR', 'WITHDRAWN']);
/** The EU system asks clients not to poll a SUBMITTED transaction sooner than 30 minutes (KNOWN). */
export const EU_POLL_NOT_BEFORE_MS = 30 * 60_000;
/** The EU system validates a SUBMITTED transaction within 20 to 90 minutes (KNOWN): the longest. */
export const EU_VALIDATION_LONGEST_MS = 90 * 60_000;
