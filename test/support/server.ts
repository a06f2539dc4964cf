import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp, type App } from '../../src/app.js';
import { Logger } from '../../src/log/logger.js';
import { request, type HttpOptions, type HttpResponse } from './http.js';

export const ADMIN: [string, string] = ['root', 'r00t-pass'];

export interface TestServer {
  url: string;
  app: App;
  dataDir: string;
  /** Log lines written by the server. */
  logs: string[];
  request(path: string, options?: HttpOptions): Promise<HttpResponse>;
  /** The same request with the test admin's Basic credentials. */
  admin(path: string, options?: HttpOptions): Promise<HttpResponse>;
  close(): Promise<void>;
}

export interface TestServerOptions {
  /** Extra ini text for a --config file (the writable layer). */
  ini?: string;
  /** Reuse a data dir (restart tests). */
  dataDir?: string;
  env?: Record<string, string>;
  keepData?: boolean;
}

/** A real Divan on a loopback port with real SQLite files in a temp dir. */
export async function startServer(options: TestServerOptions = {}): Promise<TestServer> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'divan-test-'));
  const configFile = join(dataDir, 'test.ini');
  if (!options.dataDir) {
    writeFileSync(configFile, `[admins]\n${ADMIN[0]} = ${ADMIN[1]}\n[log]\nlevel = warning\n${options.ini ?? ''}\n`);
  }
  const logs: string[] = [];
  const app = await createApp({
    dataDir,
    configFiles: [configFile],
    env: options.env ?? {},
    log: new Logger('info', { write: (line: string) => logs.push(line) }),
  });
  const { port } = await app.listen(0, '127.0.0.1');
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    app,
    dataDir,
    logs,
    request: (path, requestOptions) => request(url, path, requestOptions),
    admin: (path, requestOptions) => request(url, path, { auth: ADMIN, ...requestOptions }),
    async close() {
      await app.close();
      if (!options.keepData && !options.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
