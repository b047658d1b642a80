export { createClient, type PosternClient } from './client.js';
export { type ClientErrorInit, type FieldError, PosternClientError } from './errors.js';
export type * from './types.js';
