// The worker's workflow bundle: re-exports only.
export { healthCheck } from './health-check.ts';
