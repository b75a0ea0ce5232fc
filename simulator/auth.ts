// The machine-to-machine token endpoint and bearer verification (HS256 JWT, per-process key).
import { randomBytes, randomUUID } from 'node:crypto';
import { SignJWT, decodeJwt, jwtVerify } from 'jose';
import { HttpError, badRequest } from './http-errors.ts';

export interface AuthOptions {
  clientId: string;
  clientSecret: string;
  lifetimeSeconds: number;
  businessId: string;
}

export const TOKEN_SCOPE = 'api:read api:write';

export class Auth {
  private key = randomBytes(32);
  // Token ids seen in use, and those expired early by the tokenExpiry fault: few, one per token.
  private used = new Set<string>();
  private revoked = new Set<string>();
  constructor(private opts: AuthOptions) {}

  /** POST /auth/machine-to-machine-clients/token: 400 for a bad body, 401 for wrong credentials. */
  async exchange(body: unknown): Promise<Record<string, unknown>> {
    const b = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
    const messages: string[] = [];
    for (const field of ['client_id', 'client_secret', 'grant_type']) {
      if (typeof b[field] !== 'string' || b[field] === '') messages.push(`${field} must be a non-empty string`);
    }
    if (typeof b['grant_type'] === 'string' && b['grant_type'] !== '' && b['grant_type'] !== 'client_credentials') {
      messages.push('grant_type must be client_credentials');
    }
    if (messages.length > 0) throw badRequest(messages);
    if (b['client_id'] !== this.opts.clientId || b['client_secret'] !== this.opts.clientSecret) {
      throw new HttpError(401, 'Invalid client credentials');
    }
    return {
      access_token: await this.mint(this.opts.lifetimeSeconds),
      token_type: 'Bearer',
      expires_in: this.opts.lifetimeSeconds,
      scope: TOKEN_SCOPE,
    };
  }

  /** Signs a token with any lifetime (negative = already expired; used by control for tests). */
  mint(lifetimeSeconds: number): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({ scope: TOKEN_SCOPE, business_id: this.opts.businessId })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(this.opts.clientId)
      .setJti(randomUUID())
      .setIssuedAt(now)
      .setExpirationTime(now + lifetimeSeconds)
      .sign(this.key);
  }

  /** 401 for a missing, malformed, forged or expired bearer token. */
  async verify(header: string | undefined): Promise<void> {
    const match = /^Bearer\s+(\S+)$/i.exec(header ?? '');
    if (!match?.[1]) throw new HttpError(401, 'Unauthorized');
    let jti: string | undefined;
    try {
      jti = (await jwtVerify(match[1], this.key, { algorithms: ['HS256'] })).payload.jti;
    } catch {
      throw new HttpError(401, 'Unauthorized');
    }
    if (jti && this.revoked.has(jti)) throw new HttpError(401, 'Unauthorized');
    if (jti) this.used.add(jti);
  }

  /**
   * The tokenExpiry fault: a token that has already been used expires now, for good, as a token
   * revoked or expired early by the live service would. A fresh token is never expired on its first
   * use, so a client that re-authenticates once always recovers.
   */
  expireEarly(header: string | undefined): boolean {
    const token = /^Bearer\s+(\S+)$/i.exec(header ?? '')?.[1];
    if (!token) return false;
    let jti: string | undefined;
    try {
      jti = decodeJwt(token).jti;
    } catch {
      return false;
    }
    if (!jti || !this.used.has(jti)) return false;
    this.revoked.add(jti);
    return true;
  }

  setCredentials(clientId: string, clientSecret: string): void {
    this.opts = { ...this.opts, clientId, clientSecret };
  }
}
