/**
 * The upstream service's resources as ddsync sees them after validation and normalisation at
 * the API boundary (upstream/): `{}` for unset values is null, text flags are booleans,
 * open value sets are strings, unknown extra fields are kept. Each type has its zod schema.
 */
export * from './upstream/primitives.ts';
export * from './upstream/geometry.ts';
export * from './upstream/records.ts';
export * from './upstream/transactions.ts';
export * from './upstream/webhooks.ts';
export * from './upstream/auth.ts';
