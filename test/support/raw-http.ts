import net from 'node:net';

export interface RawAnswer {
  /** Status of the answer, 0 when none came. */
  status: number;
  head: string;
  body: string;
  /** The socket error, if the connection ended with one (ECONNRESET, EPIPE). */
  error?: string;
}

/**
 * Writes `parts` (a request head and what of its body the test chooses, never necessarily all)
 * over a fresh connection and reads whatever comes back until the server closes it: what a server
 * answers before it has the whole body, and whether it closes, are visible as sent.
 */
export function rawExchange(port: number, ...parts: Array<string | Buffer>): Promise<RawAnswer> {
  return new Promise((resolve) => {
    let data = '';
    let error: string | undefined;
    const socket = net.connect(port, '127.0.0.1', () => {
      for (const part of parts) socket.write(part);
    });
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      data += chunk;
    });
    socket.on('error', (e: NodeJS.ErrnoException) => {
      error = e.code ?? e.message;
    });
    socket.on('close', () => {
      const [head = '', body = ''] = data.split('\r\n\r\n');
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0), head, body, ...(error ? { error } : {}) });
    });
  });
}
