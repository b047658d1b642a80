// The inbox area's public exports (re-exported by `@postern/core`).
export type { InboxApi } from './api.js';
export { directoryFiles } from './directory-files.js';
export { mailNotifier } from './notify.js';
export type { InboxOptions } from './options.js';
export type { RecordOutboundInput } from './outbound.js';
export { type ProviderConfig, ProviderError, resendProvider } from './provider-client.js';
export { normalizeSubject } from './subject.js';
export type * from './views.js';
