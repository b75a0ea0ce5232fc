import { createServer } from 'node:net';

/** Asks the kernel for a free TCP port on the given interface. */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, host, () => {
      const address = server.address();
      server.close(() => {
        if (address && typeof address === 'object') resolve(address.port);
        else reject(new Error('could not determine a free port'));
      });
    });
  });
}

/** Resolves once something accepts TCP connections on host:port, or rejects after `timeoutMs`. */
export async function waitForPort(host: string, port: number, timeoutMs: number): Promise<void> {
  const { connect } = await import('node:net');
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect({ host, port });
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    if (Date.now() > deadline) throw new Error(`nothing listens on ${host}:${port} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const PORT_ATTEMPTS = 3;

/**
 * A port found free may be taken before the server binds it (another process probing at the same
 * moment: parallel test files, a second demo). When the ports are ddsync's choice, a start that
 * failed on "address already in use" is tried again with new ones, at most PORT_ATTEMPTS times.
 */
export async function retryTakenPorts<T>(oursToChoose: boolean, start: (attempt: number) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start(attempt);
    } catch (error) {
      if (!oursToChoose || attempt >= PORT_ATTEMPTS || !/address already in use/i.test(String(error))) throw error;
    }
  }
}
