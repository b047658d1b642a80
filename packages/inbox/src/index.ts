export { decodeWords } from './header-words.js';
export { htmlToText } from './html-text.js';
export { type MimeAddress, type MimeAttachment, type ParsedMime, parseMime } from './mime.js';
