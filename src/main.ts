#!/usr/bin/env node
import { isIP } from 'node:net';
import { parseArgs } from 'node:util';
import { createApp, StartupError, VERSION, type App } from './app.js';
import { ConfigLoadError } from './config/config-file.js';
import { AuthenticationConfigError } from './auth/build-chain.js';

const USAGE = 'usage: divan [--port N] [--bind ADDR] [--data DIR] [--config FILE]...';

interface Flags {
  port?: number;
  bind?: string;
  data: string;
  config: string[];
}

function fail(message: string, code = 1): never {
  process.stderr.write(`Divan: ${message}\n`);
  process.exit(code);
}

function readFlags(argv: string[]): Flags {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        port: { type: 'string' },
        bind: { type: 'string' },
        data: { type: 'string' },
        config: { type: 'string', multiple: true },
        help: { type: 'boolean' },
        version: { type: 'boolean' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    fail(`${(error as Error).message.split('\n')[0]} (${USAGE})`, 2);
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  if (values.version) {
    process.stdout.write(`${VERSION}\n`);
    process.exit(0);
  }
  let port: number | undefined;
  if (values.port !== undefined) {
    if (!/^\d+$/.test(values.port) || Number(values.port) > 65535) fail(`--port must be a number from 0 to 65535, not ${JSON.stringify(values.port)}`, 2);
    port = Number(values.port);
  }
  if (values.bind !== undefined && isIP(values.bind) === 0 && values.bind !== 'localhost') {
    fail(`--bind must be an IP address, not ${JSON.stringify(values.bind)}`, 2);
  }
  if (values.data === '') fail('--data needs a directory', 2);
  return { port, bind: values.bind, data: values.data ?? 'data', config: values.config ?? [] };
}

function urlHost(address: string): string {
  return isIP(address) === 6 ? `[${address}]` : address;
}

async function main(): Promise<void> {
  const flags = readFlags(process.argv.slice(2));
  let app: App;
  try {
    app = await createApp({ dataDir: flags.data, configFiles: flags.config, env: process.env });
  } catch (error) {
    if (error instanceof StartupError || error instanceof ConfigLoadError || error instanceof AuthenticationConfigError) fail(error.message);
    throw error;
  }
  const port = flags.port ?? app.config.getInteger('chttpd', 'port');
  const bind = flags.bind ?? app.config.getString('chttpd', 'bind_address');
  let bound: { address: string; port: number };
  let tlsBound: { address: string; port: number } | undefined;
  try {
    bound = await app.listen(port, bind);
    if (app.config.getBoolean('ssl', 'enable')) {
      tlsBound = await app.listenTls(app.config.getInteger('ssl', 'port'), bind);
    }
  } catch (error) {
    await app.close();
    if (error instanceof StartupError) fail(error.message);
    throw error;
  }
  // Installed before the ready line: a supervisor may signal as soon as it reads it.
  let stopping = false;
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    app.close().then(
      () => process.exit(0),
      (error: unknown) => fail(`error while stopping: ${(error as Error).message}`),
    );
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);

  if (app.generatedAdminPassword) {
    process.stdout.write(
      `No server admin was configured: created "admin" with password ${app.generatedAdminPassword}\n` +
        '(only its hash is stored; this is the only time it is shown)\n',
    );
  }
  if (tlsBound) process.stdout.write(`Divan listening on https://${urlHost(tlsBound.address)}:${tlsBound.port}/\n`);
  process.stdout.write(`Divan listening on http://${urlHost(bound.address)}:${bound.port}/\n`);
}

main().catch((error: unknown) => fail(`unexpected start-up failure: ${(error as Error).message}`));
