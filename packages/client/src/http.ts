import { errorOf, networkError } from './errors.js';

export type FetchFn = typeof globalThis.fetch;

export interface CallInit {
  method?: string;
  json?: unknown;
  token?: string | null;
  credentials?: RequestCredentials;
}

/** One request to Postern, JSON in; a PosternClientError when no answer comes. */
export async function send(fetchFn: FetchFn, url: string, init: CallInit): Promise<Response> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (init.json !== undefined) headers['content-type'] = 'application/json';
  if (init.token) headers.authorization = `Bearer ${init.token}`;
  let res: Response;
  try {
    res = await fetchFn(url, {
      method: init.method ?? (init.json === undefined ? 'GET' : 'POST'),
      headers,
      body: init.json === undefined ? undefined : JSON.stringify(init.json),
      credentials: init.credentials,
      cache: 'no-store',
    });
  } catch (e) {
    throw networkError(e);
  }
  return res;
}

/** The answer's JSON (undefined for 204), or its problem as a PosternClientError. */
export async function bodyOf<T>(res: Response): Promise<T> {
  if (!res.ok) throw await errorOf(res);
  if (res.status === 204 || !/json/.test(res.headers.get('content-type') ?? '')) return undefined as T;
  return (await res.json()) as T;
}

/** Whether a 401 says the access token is no good (Postern's problem code, or RFC 6750's
 *  challenge from any resource server). */
export async function isInvalidToken(res: Response): Promise<boolean> {
  if (res.status !== 401) return false;
  if (/invalid_token/.test(res.headers.get('www-authenticate') ?? '')) return true;
  try {
    return (await res.clone().json())?.code === 'invalid_token';
  } catch {
    return false;
  }
}
