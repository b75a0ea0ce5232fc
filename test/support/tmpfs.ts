import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, openSync, rmSync, writeSync } from 'node:fs';
import { resolve } from 'node:path';

/**
 * A real disk that fills: a tmpfs of a given size, mounted by root (here and in CI), filled by a file
 * until the kernel answers ENOSPC, then grown in place, as an operator grows a volume. Mounting needs
 * root: anything else fails loudly, naming what is missing, since a test that cannot fill a disk must
 * not pass as if it had.
 */
export interface Tmpfs {
  dir: string;
  /** Writes a filler file until the disk is full; returns the bytes it took. */
  fill(): number;
  /** Grows the disk in place (`mount -o remount,size=…`): what is on it stays. */
  grow(size: string): void;
  /** Removes the filler. */
  empty(): void;
  unmount(): void;
}

export function mountTmpfs(dir: string, size: string): Tmpfs {
  if (process.getuid?.() !== 0)
    throw new Error(`mounting a tmpfs at ${dir} needs root (uid 0); this process runs as uid ${process.getuid?.()}`);
  mkdirSync(dir, { recursive: true });
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size},mode=0755`, 'tmpfs', dir], { stdio: 'pipe' });
  } catch (error) {
    const stderr = (error as { stderr?: Buffer }).stderr?.toString().trim();
    throw new Error(`mount -t tmpfs -o size=${size} tmpfs ${dir} failed: ${stderr || String(error)}`);
  }
  const filler = resolve(dir, 'filler');
  let mounted = true;
  return {
    dir,
    fill() {
      const fd = openSync(filler, 'a');
      let taken = 0;
      try {
        // Big writes first, then pages: the last short write leaves less than a page free.
        for (const size of [1 << 20, 4096]) {
          const chunk = Buffer.alloc(size, 0x5a);
          for (;;) {
            try {
              const n = writeSync(fd, chunk);
              taken += n;
              if (n < size) break;
            } catch (error) {
              if ((error as { code?: string }).code === 'ENOSPC') break;
              throw error;
            }
          }
        }
      } finally {
        closeSync(fd);
      }
      return taken;
    },
    grow(size: string) {
      execFileSync('mount', ['-o', `remount,size=${size}`, dir], { stdio: 'pipe' });
    },
    empty() {
      rmSync(filler, { force: true });
    },
    unmount() {
      if (!mounted) return;
      try {
        execFileSync('umount', [dir], { stdio: 'pipe' });
      } catch {
        // Something still holds a file there (a server that did not stop): detach it anyway.
        execFileSync('umount', ['-l', dir], { stdio: 'pipe' });
      }
      mounted = false;
    },
  };
}
