import { parseBearerToken } from '../domain/api-key.js';
import type { Principal } from '../domain/principal.js';
import { secretsEqual } from '../domain/secrets.js';
import type { ApiKeyService } from './api-keys.js';

/** Turns an Authorization header into a Principal: the admin token, an active API key, or nothing. */
export class AuthService {
  constructor(
    private readonly apiKeys: ApiKeyService,
    private readonly adminToken: string,
  ) {}

  async principalFor(authorization: string | null | undefined): Promise<Principal> {
    if (authorization == null || authorization === '') return { kind: 'anonymous' };
    const token = parseBearerToken(authorization);
    if (token === null) return { kind: 'invalid' };
    if (secretsEqual(token, this.adminToken)) return { kind: 'admin' };
    const apiKey = await this.apiKeys.findActiveByKey(token);
    if (!apiKey) return { kind: 'invalid' };
    return { kind: 'apiKey', apiKeyId: apiKey.id, tier: apiKey.tier };
  }
}
