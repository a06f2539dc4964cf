/**
 * One request on its own connection (no agent), with Basic credentials, whose `ClientRequest` the
 * caller may hold: tests that abandon a request mid-way destroy it.
 */
import { request as httpRequest, type ClientRequest } from 'node:http';

export interface RawAnswer {
  status: number;
  body: any;
}

export function sendRaw(
  base: string,
  credentials: string,
  method: string,
  path: string,
  body?: unknown,
  onRequest?: (req: ClientRequest) => void,
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const url = new URL(path, base);
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const headers: Record<string, string> = { Authorization: `Basic ${Buffer.from(credentials).toString('base64')}` };
    if (payload) Object.assign(headers, { 'Content-Type': 'application/json', 'Content-Length': String(payload.length) });
    const req = httpRequest({ host: url.hostname, port: url.port, path, method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, body: text === '' ? undefined : JSON.parse(text) });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    onRequest?.(req);
    req.end(payload);
  });
}
