import { connect } from 'node:net';

export interface RawAnswer {
  status: number;
  /** Lower-case names. */
  headers: Record<string, string>;
  body: string;
}

/** Writes raw bytes (requests fetch refuses to send: malformed framing, huge headers) and reads
 *  the one answer until the server ends its side. The client never ends its own side first
 *  (`allowHalfOpen`), so a server that only half-closes is still seen holding the connection. */
export function rawExchange(url: string, request: string): Promise<RawAnswer> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ port: Number(port), host: hostname, allowHalfOpen: true }, () =>
      socket.write(request),
    );
    let raw = '';
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => {
      raw += d;
    });
    socket.on('error', reject);
    socket.on('end', () => {
      const [head = '', body = ''] = raw.split('\r\n\r\n');
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const i = line.indexOf(':');
        headers[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim();
      }
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body });
    });
  });
}
