import { randomBytes } from 'node:crypto';
import { open, readFile, realpath, rename, stat, unlink } from 'node:fs/promises';
import path from 'node:path';

/** Reading the configuration files, and rewriting the writable one so that a crash never leaves half of it. */

export class ConfigLoadError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigLoadError';
  }
}

// The writable layer ends up holding hashed admin passwords and the cookie secret.
const NEW_FILE_MODE = 0o600;

function errorCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : undefined;
}

/** Node says "ENOENT: no such file or directory, open '/x.ini'"; the path is already in our message. */
function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const syscall = (error as NodeJS.ErrnoException).syscall;
  let message = error.message;
  const suffix = syscall === undefined ? -1 : message.lastIndexOf(`, ${syscall}`);
  if (suffix !== -1) message = message.slice(0, suffix);
  return message.replace(/\s+/g, ' ').trim();
}

export async function readConfigFile(file: string): Promise<string>;
export async function readConfigFile(file: string, optional: true): Promise<string | undefined>;
export async function readConfigFile(file: string, optional = false): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    if (optional && errorCode(error) === 'ENOENT') return undefined;
    throw new ConfigLoadError(`cannot read config file ${file}: ${describe(error)}`);
  }
}

async function writeAtomically(target: string, text: string): Promise<void> {
  const directory = path.dirname(target);
  const mode = await stat(target).then(
    (stats) => stats.mode & 0o7777,
    () => NEW_FILE_MODE,
  );
  const temporary = path.join(directory, `.${path.basename(target)}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    const handle = await open(temporary, 'wx', mode);
    try {
      await handle.writeFile(text, 'utf8');
      // open() applies the umask; chmod makes the copy's mode match the file it replaces.
      await handle.chmod(mode);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temporary, target);
  } catch (error) {
    await unlink(temporary).catch(() => undefined);
    throw error;
  }
  await syncDirectory(directory);
}

/** Makes the rename itself durable; platforms that cannot open a directory (Windows) skip it. */
async function syncDirectory(directory: string): Promise<void> {
  let handle;
  try {
    handle = await open(directory, 'r');
  } catch (error) {
    if (['EISDIR', 'EPERM', 'EACCES'].includes(errorCode(error) ?? '')) return;
    throw error;
  }
  try {
    await handle.sync();
  } catch (error) {
    if (!['EINVAL', 'EPERM', 'EBADF'].includes(errorCode(error) ?? '')) throw error;
  } finally {
    await handle.close();
  }
}

/** Applies `edit` to the file's text (empty when it does not exist yet) through a link, if it is one. */
export async function rewriteConfigFile(file: string, edit: (text: string) => string): Promise<void> {
  const target = await realpath(file).catch((error: unknown) => {
    if (errorCode(error) === 'ENOENT') return file;
    throw error;
  });
  const current = await readFile(target, 'utf8').catch((error: unknown) => {
    if (errorCode(error) === 'ENOENT') return '';
    throw error;
  });
  await writeAtomically(target, edit(current));
}
