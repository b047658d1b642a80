import type { ZodType, z } from 'zod';
import { PosternError } from '../errors.js';

/** `value` checked against `schema`; 400 `validation_failed` naming at most 20 fields. */
export function validate<T>(schema: ZodType<T>, value: unknown): T {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  throw new PosternError('validation_failed', {
    errors: r.error.issues.slice(0, 20).map((i) => ({ path: i.path.join('.') || '/', message: i.message })),
  });
}

/** The input argument of a validated function: optional where the schema takes `undefined`. */
type InputArg<S extends z.ZodType> =
  undefined extends z.input<S> ? [input?: z.input<S>] : [input: z.input<S>];

/** `fn` with its input checked against `schema` first, exactly as over HTTP; a bad input
 *  rejects with `validation_failed` (library callers never see a synchronous throw). */
export function validated<S extends z.ZodType, M extends unknown[], R>(
  schema: S,
  fn: (input: z.output<S>, ...meta: M) => Promise<R>,
) {
  return async (...[input, ...meta]: [...InputArg<S>, ...M]): Promise<R> =>
    fn(validate(schema, input) as z.output<S>, ...(meta as M));
}

/** As `validated`, for flows that act for a caller (`principal` first). */
export function validatedFor<P, S extends z.ZodType, M extends unknown[], R>(
  schema: S,
  fn: (principal: P, input: z.output<S>, ...meta: M) => Promise<R>,
) {
  return async (principal: P, ...[input, ...meta]: [...InputArg<S>, ...M]): Promise<R> =>
    fn(principal, validate(schema, input) as z.output<S>, ...(meta as M));
}
