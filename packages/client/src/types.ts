import type { operations } from './openapi.gen.js';

type Json<T> = T extends { content: { 'application/json': infer B } } ? B : never;
/** The JSON answer of an operation of the server's OpenAPI document. */
export type Answer<Op extends keyof operations, S extends number = 200> = Json<
  operations[Op]['responses'][S & keyof operations[Op]['responses']]
>;
/** The JSON body of an operation of the server's OpenAPI document. */
export type Body<Op extends keyof operations> = Json<NonNullable<operations[Op]['requestBody']>>;

export type User = Answer<'me'>['user'];
export type SessionAnswer = Answer<'refresh'>;
export type MfaRequiredAnswer = Extract<Answer<'login'>, { mfaRequired: true }>;
export type MfaMethod = MfaRequiredAnswer['methods'][number];
export type SessionInfo = Answer<'listSessions'>['sessions'][number];
export type SignUpInput = Body<'signup'>;
export type SignUpAnswer = Answer<'signup', 201>;
export type ChangePasswordInput = Body<'changePassword'>;
export type TotpSeed = Answer<'totpSetup'>;
export type RecoveryCodes = Answer<'regenerateRecoveryCodes'>;
export type Passkey = Answer<'listPasskeys'>['credentials'][number];
export type PasskeyRegistered = Answer<'webauthnRegisterVerify'>;
export type InboxAccount = Answer<'createAccount', 201>;
export type InboxMember = Answer<'addMember', 201>['member'];
export type ThreadPage = Answer<'listThreads'>;
export type ThreadDetail = Answer<'getThread'>;
export type InboxMessage = ThreadDetail['messages'][number];
export type ReplyInput = Body<'reply'>;

/** What the client knows about the session; the same object until something changes. */
export type Session =
  | { status: 'loading'; user: null }
  | { status: 'signed-out'; user: null }
  | { status: 'mfa-required'; user: null; methods: MfaMethod[] }
  | { status: 'signed-in'; user: User };

export type LogInResult =
  | { status: 'signed-in'; user: User }
  | { status: 'mfa-required'; methods: MfaMethod[]; enrol?: MfaRequiredAnswer['enrol'] };

/** Where a Node client keeps its refresh token between runs (a file, a keychain...). */
export interface TokenStorage {
  get(): string | null | undefined | Promise<string | null | undefined>;
  set(token: string): void | Promise<void>;
  delete(): void | Promise<void>;
}

export interface ClientOptions {
  /** Origin (and path prefix, if any) where Postern's routes are mounted; in a browser the
   *  page's origin by default. Relative URLs given to `client.fetch` resolve against it. */
  baseUrl?: string;
  /** Mount point of the auth routes (default `/auth`). */
  authPath?: string;
  /** Mount point of the inbox API (default `/inbox`). */
  inboxPath?: string;
  fetch?: typeof globalThis.fetch;
  /** `cookie`: the refresh token is an HttpOnly cookie the page never sees (the default in a
   *  browser). `token`: the client holds it, in memory or in `storage` (the default elsewhere). */
  mode?: 'cookie' | 'token';
  storage?: TokenStorage;
}
