/**
 * The warehouse as Kysely sees it: one interface per table. Tables arrive with the migrations in
 * sql/ (warehouse refresh issue); until then the database has no typed tables.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface Database {}
