import { z } from 'zod';

/** The client-credentials token response (contract). expires_in is optional here: we default it. */
export interface TokenResponse {
  access_token: string;
  token_type?: string | null;
  expires_in?: number | null;
  scope?: string | null;
}

export const TokenResponseSchema: z.ZodType<TokenResponse> = z.looseObject({
  access_token: z.string().min(1),
  token_type: z.string().nullish(),
  expires_in: z.number().positive().nullish(),
  scope: z.string().nullish(),
});
