import { startSimulator, type Simulator, type SimulatorOptions } from '../../simulator/index.ts';
import { createUpstreamClient, type UpstreamClient, type UpstreamClientOptions } from '../../upstream/index.ts';

export interface Harness {
  sim: Simulator;
  api: UpstreamClient;
  /** Another client against the same simulator, with its own options. */
  client(options?: Partial<UpstreamClientOptions>): UpstreamClient;
  close(): Promise<void>;
}

/**
 * The client against the simulator over real HTTP on a free port. Backoff is shortened so fault
 * tests run in milliseconds; everything else is the production code path.
 */
export async function startHarness(
  simOptions: SimulatorOptions = {},
  clientOptions: Partial<UpstreamClientOptions> = {},
): Promise<Harness> {
  const sim = await startSimulator({ port: 0, ...simOptions });
  const client = (options: Partial<UpstreamClientOptions> = {}) =>
    createUpstreamClient({
      baseUrl: sim.url,
      clientId: simOptions.clientId ?? 'ddsync-demo',
      clientSecret: simOptions.clientSecret ?? 'ddsync-demo-secret',
      retryBaseMs: 2,
      retryMaxMs: 20,
      retryAfterFloorMs: 1,
      timeoutMs: 5_000,
      ...clientOptions,
      ...options,
    });
  return { sim, api: client(), client, close: () => sim.close() };
}

/** Awaits a promise expected to reject and returns the error, failing the test if it resolves. */
export async function rejectionOf(promise: Promise<unknown>): Promise<Error & Record<string, unknown>> {
  try {
    await promise;
  } catch (error) {
    return error as Error & Record<string, unknown>;
  }
  throw new Error('expected the call to fail, but it succeeded');
}
