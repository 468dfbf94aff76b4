/**
 * A minimal browser stand-in for the dashboard over inject(): a cookie jar (Path=/dashboard
 * cookies only matter there), CSRF tokens read from the last page, form posts.
 */
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';

export const PASSWORD = 'correct horse battery staple';

export function csrfTokenOf(page: string): string {
  const match = /name="_csrf" value="([^"]+)"/.exec(page);
  if (!match) throw new Error('no CSRF token on the page');
  return match[1]!;
}

export class DashboardClient {
  readonly jar = new Map<string, string>();
  lastPage = '';

  constructor(
    private readonly app: FastifyInstance,
    readonly remoteAddress = '127.0.0.1',
    /** Sent with every request (e.g. X-Forwarded-For from a proxy). */
    private readonly headers: Record<string, string> = {},
  ) {}

  private cookieHeader(): string | undefined {
    if (this.jar.size === 0) return undefined;
    return [...this.jar].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  private remember(response: LightMyRequestResponse): void {
    for (const cookie of response.cookies as { name: string; value: string; maxAge?: number; expires?: Date }[]) {
      const expired = cookie.value === '' || cookie.maxAge === 0 || (cookie.expires !== undefined && cookie.expires.getTime() <= Date.now());
      if (expired) this.jar.delete(cookie.name);
      else this.jar.set(cookie.name, cookie.value);
    }
  }

  async get(url: string): Promise<LightMyRequestResponse> {
    const cookie = this.cookieHeader();
    const response = await this.app.inject({ method: 'GET', url, remoteAddress: this.remoteAddress, headers: { ...this.headers, ...(cookie ? { cookie } : {}) } });
    this.remember(response);
    if (response.headers['content-type']?.toString().startsWith('text/html')) this.lastPage = response.body;
    return response;
  }

  /** A form post; `_csrf` is taken from the last page unless given (null: none sent). */
  async post(url: string, fields: Record<string, string> = {}, csrf: string | null | undefined = undefined): Promise<LightMyRequestResponse> {
    const token = csrf === undefined ? csrfTokenOf(this.lastPage) : csrf;
    const form = new URLSearchParams({ ...fields, ...(token === null ? {} : { _csrf: token }) });
    const cookie = this.cookieHeader();
    const response = await this.app.inject({
      method: 'POST',
      url,
      remoteAddress: this.remoteAddress,
      headers: { ...this.headers, 'content-type': 'application/x-www-form-urlencoded', ...(cookie ? { cookie } : {}) },
      payload: form.toString(),
    });
    this.remember(response);
    if (response.headers['content-type']?.toString().startsWith('text/html')) this.lastPage = response.body;
    return response;
  }

  async signIn(email: string, password = PASSWORD): Promise<LightMyRequestResponse> {
    await this.get('/dashboard/login');
    return this.post('/dashboard/login', { email, password });
  }
}

export const CREATE_ACCOUNT = `mutation($input: CreateAccountInput!) { createAccount(input: $input) { id email tier createdAt } }`;
export const SET_ACCOUNT_TIER = `mutation($id: ID!, $tier: Tier!) { setAccountTier(id: $id, tier: $tier) { id tier apiKeys { id tier } } }`;
