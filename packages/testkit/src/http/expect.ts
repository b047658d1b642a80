import { expect } from 'vitest';

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  code: string;
  detail?: string;
  errors?: Array<{ path: string; message: string }>;
}

/** Asserts an RFC 9457 answer with `status` and `code`; returns its body. */
export async function expectProblem(res: Response, status: number, code: string): Promise<ProblemBody> {
  const text = await res.text();
  expect({ status: res.status, body: text.slice(0, 300) }).toMatchObject({ status });
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  const body = JSON.parse(text) as ProblemBody;
  expect(body).toMatchObject({ status, code, type: expect.any(String), title: expect.any(String) });
  return body;
}

/** Asserts the headers every Postern answer carries. */
export function expectSafeHeaders(res: Response): void {
  expect(res.headers.get('x-content-type-options')).toBe('nosniff');
  expect(res.headers.get('cache-control')).toBe('no-store');
}
