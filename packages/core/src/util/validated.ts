import type { z } from 'zod';
import { validate } from '../http/handle.js';

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
