import { request as httpRequest, type Agent, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';

export interface HttpResponse {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  /** Parsed JSON body (undefined when the body is empty). */
  body: any;
}

export interface HttpOptions {
  method?: string;
  headers?: Record<string, string | string[]>;
  /** An object or array is sent as JSON; a string or Buffer as is. */
  body?: unknown;
  /** Basic credentials as [name, password]. */
  auth?: [string, string];
  /** A keep-alive agent, to stay on one connection (one worker process); a fresh connection by default. */
  agent?: Agent;
}

/** A plain node:http client, so tests control every header byte (fetch would add its own). */
export function request(baseUrl: string, path: string, options: HttpOptions = {}): Promise<HttpResponse> {
  const url = new URL(path, baseUrl);
  const headers: Record<string, string | string[]> = { ...options.headers };
  let payload: Buffer | undefined;
  if (options.body !== undefined) {
    if (Buffer.isBuffer(options.body)) payload = options.body;
    else if (typeof options.body === 'string') payload = Buffer.from(options.body);
    else {
      payload = Buffer.from(JSON.stringify(options.body));
      if (!Object.keys(headers).some((name) => name.toLowerCase() === 'content-type')) headers['Content-Type'] = 'application/json';
    }
  }
  // node:http frames a body without a length only for methods that usually carry one: say it always.
  if (payload !== undefined && !Object.keys(headers).some((name) => name.toLowerCase() === 'content-length')) {
    headers['Content-Length'] = String(payload.length);
  }
  if (options.auth) headers['Authorization'] = `Basic ${Buffer.from(`${options.auth[0]}:${options.auth[1]}`).toString('base64')}`;
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: url.hostname, port: url.port, path: path.startsWith('/') ? path : url.pathname + url.search, method: options.method ?? 'GET', headers, agent: options.agent ?? false },
      (res) => collectResponse(res).then(resolve, reject),
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** Reads a whole response into an HttpResponse (JSON parsed when it is JSON). */
export function collectResponse(res: IncomingMessage): Promise<HttpResponse> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (chunk: Buffer) => chunks.push(chunk));
    res.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown;
      try {
        body = text === '' ? undefined : JSON.parse(text);
      } catch {
        body = undefined;
      }
      resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body });
    });
    res.on('error', reject);
  });
}
