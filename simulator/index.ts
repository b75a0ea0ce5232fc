// Public entry: start the simulator in-process (tests, demo) or from the CLI.
import type { AddressInfo } from 'node:net';
import { createControl, type SimulatorControl } from './control.ts';
import { controlRoutes } from './control-routes.ts';
import { createHttpServer } from './http-server.ts';
import { resolveOptions, type SimulatorOptions } from './options.ts';
import { miscRoutes } from './routes-misc.ts';
import { networkRoutes } from './routes-network.ts';
import { plotRoutes } from './routes-plots.ts';
import { transactionRoutes } from './routes-transactions.ts';
import { webhookRoutes } from './routes-webhooks.ts';
import { createState } from './state.ts';

export type { SimulatorOptions, Entitlements } from './options.ts';
export type { SimulatorControl, SupplierInfo, AnalysisInput } from './control.ts';
export type { FaultProfile } from './faults.ts';
export type { InterceptRule, InterceptAction } from './intercepts.ts';
export type { LayoutSpec } from './layout.ts';
export type { PlotPatch } from './plot-store.ts';
export type { OddKind } from './plot-factory.ts';
export { FAULT_PROFILES, parseFaults } from './faults.ts';
export { RETRY_SCHEDULE_MS } from './delivery.ts';

export interface Simulator {
  /** Base URL, e.g. http://127.0.0.1:4010 (no trailing slash). */
  url: string;
  port: number;
  control: SimulatorControl;
  /** Stops the server, every timer and pending webhook delivery. */
  close(): Promise<void>;
}

export async function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const opts = resolveOptions(options);
  const state = createState(opts);
  const control = createControl(state);
  const server = createHttpServer(state, [
    ...miscRoutes(state),
    ...networkRoutes(state),
    ...plotRoutes(state),
    ...transactionRoutes(state),
    ...webhookRoutes(state),
    ...controlRoutes(control),
  ]);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const host = opts.host.includes(':') ? `[${opts.host}]` : opts.host;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${host}:${port}`,
    port,
    control,
    close() {
      closing ??= new Promise<void>((resolve) => {
        state.timers.close();
        state.delivery.close();
        state.intercepts.discard();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
