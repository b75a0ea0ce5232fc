// The worker's workflow bundle: re-exports only.
export { healthCheck } from './health-check.ts';
export { refreshWarehouse } from './refresh-warehouse.ts';
export { syncSupplierPlots } from './sync-supplier-plots.ts';
export { submitTransaction } from './submit-transaction.ts';
export { bulkSubmit } from './bulk-submit.ts';
export { submitBatch } from './submit-batch.ts';
export { maintainWebhooks } from './maintain-webhooks.ts';
export { archiveSurveyPdfs } from './archive-pdfs.ts';
