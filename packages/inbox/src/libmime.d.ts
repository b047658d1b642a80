// libmime ships no types; only what Postern calls. Its export is an instance whose methods
// use `this`: call them on it, never detached.
declare module 'libmime' {
  const libmime: {
    /** Decodes RFC 2047 encoded words (`=?charset?Q|B?...?=`) in a header value. */
    decodeWords(value: string): string;
  };
  export default libmime;
}
