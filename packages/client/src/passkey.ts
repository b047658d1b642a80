type WebAuthnBrowser = typeof import('@simplewebauthn/browser');

let lib: Promise<WebAuthnBrowser> | undefined;

/** @simplewebauthn/browser, loaded on the first passkey call only: a page that never uses a
 *  passkey never downloads it. */
export const webauthn = (): Promise<WebAuthnBrowser> => {
  lib ??= import('@simplewebauthn/browser');
  return lib;
};
