// Errors in the service's shape: {statusCode, message, error}; `message` may be a list for 400s.
import { STATUS_CODES } from 'node:http';

export class HttpError extends Error {
  constructor(
    readonly statusCode: number,
    readonly messages: string | string[],
    readonly headers: Record<string, string> = {},
  ) {
    super(Array.isArray(messages) ? messages.join('; ') : messages);
  }
  body(): { statusCode: number; message: string | string[]; error: string } {
    return { statusCode: this.statusCode, message: this.messages, error: STATUS_CODES[this.statusCode] ?? 'Error' };
  }
}

export const badRequest = (messages: string | string[]): HttpError => new HttpError(400, messages);
export const notFound = (what: string): HttpError => new HttpError(404, `${what} not found`);
export const forbidden = (message: string): HttpError => new HttpError(403, message);
export const conflict = (message: string): HttpError => new HttpError(409, message);
