import { inject } from 'vitest';

/** Where the run's embedded Postgres and Temporal dev server listen (test/support/stack-setup.ts). */
export interface EmbeddedStack {
  /** Superuser URL of the run's cluster, with the database name left to each test file. */
  postgresUrlTemplate: string;
  temporalAddress: string;
  temporalNamespace: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    /** Provided to the integration project only: read it with embeddedStack(), which says so when absent. */
    stack?: EmbeddedStack;
  }
}

/**
 * The run's Postgres and Temporal. Only the integration project starts them (vitest.config.ts): a test
 * of the unit project that reaches for them fails here, by name, instead of hanging on a connection.
 */
export function embeddedStack(): EmbeddedStack {
  const stack = inject('stack');
  if (!stack) {
    throw new Error(
      'This test needs the embedded stack (Postgres, Temporal), which only the integration project starts: ' +
        'put it under test/integration/ or test/cli/ (see vitest.config.ts), or make it need neither.',
    );
  }
  return stack;
}
