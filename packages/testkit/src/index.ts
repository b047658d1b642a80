export * from './fake-provider.js';
export {
  APP_ORIGIN,
  expectCookieSessionThroughAdapter,
  parseSetCookie,
  refreshCookieOf,
  type SetCookie,
  withHostCookie,
} from './http/browser.scenarios.js';
export * from './http/conformance.js';
export * from './http/contract.js';
export * from './http/expect.js';
export * from './http/harness.js';
export * from './http/raw-exchange.js';
export * from './http/serve.js';
export * from './http/soft-authenticator.js';
export * from './http/webhook-signing.js';
export * from './mail-catcher.js';
export * from './recording-logger.js';
export * from './store/contract.js';
export * from './test-clock.js';
