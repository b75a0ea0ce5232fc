import { connect } from 'node:net';

/**
 * One TCP connect to `host:port` (a bracketed IPv6 host too), closed at once: resolves when something
 * listens, rejects with the socket's error (ETIMEDOUT after `timeoutMs`). What a gRPC connect would
 * hide behind its own retries until a deadline.
 */
export function tcpConnect(address: string, timeoutMs: number): Promise<void> {
  const at = address.lastIndexOf(':');
  return new Promise<void>((resolve, reject) => {
    const socket = connect({
      host: address.slice(0, at).replace(/^\[|\]$/g, ''),
      port: Number(address.slice(at + 1)),
    });
    socket.setTimeout(timeoutMs, () => socket.destroy(Object.assign(new Error('timed out'), { code: 'ETIMEDOUT' })));
    socket.once('connect', () => {
      socket.destroy();
      resolve();
    });
    socket.once('error', reject);
  });
}
