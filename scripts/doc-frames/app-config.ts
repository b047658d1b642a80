// Frame for fragments that configure Postern with values the app already has.
import type { KeyInput as __KeyInput, Mailer as __Mailer, Stores as __Stores } from '@postern/core';

declare const issuer: string; // e.g. 'https://app.example'
declare const audience: string; // e.g. 'app'
declare const keys: __KeyInput; // the signing keys, the same on every instance
declare const stores: __Stores; // memoryStores() or postgresStores({ pool })
declare const mailer: __Mailer; // smtpMailer(...) or consoleMailer()

/* fragment */
