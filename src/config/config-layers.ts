import path from 'node:path';
import { readConfigFile } from './config-file.js';
import { type IniSections, parseIni } from './ini.js';

/** The layers of a configuration as read from its files, lowest first. */
export interface Layers {
  /** The defaults file, with the run's own values (`runtime`) over it. */
  defaults: IniSections;
  files: IniSections[];
  writable: IniSections;
}

export async function readLayers(options: {
  defaultsFile: string;
  files: readonly string[];
  writableFile: string;
  runtime?: Readonly<Record<string, Readonly<Record<string, string>>>>;
}): Promise<Layers> {
  const { defaultsFile, writableFile } = options;
  let files = options.files;
  // The writable file doubles as the last --config file: one layer, or a delete would uncover
  // the stale copy. Named with --config, it must exist like any other --config file.
  const writableIsLastFile = files.length > 0 && path.resolve(files[files.length - 1]!) === path.resolve(writableFile);
  if (writableIsLastFile) files = files.slice(0, -1);
  const runtime: IniSections = new Map(Object.entries(options.runtime ?? {}).map(([section, keys]) => [section, new Map(Object.entries(keys))]));
  const defaults = merge([parseIni(await readConfigFile(defaultsFile)), runtime]);
  const layers: IniSections[] = [];
  for (const file of files) layers.push(parseIni(await readConfigFile(file)));
  const writableText = writableIsLastFile ? await readConfigFile(writableFile) : await readConfigFile(writableFile, true);
  return { defaults, files: layers, writable: parseIni(writableText ?? '') };
}

/** Every `[section, key]` whose value differs between two merged configurations. */
export function changedKeys(before: IniSections, after: IniSections): [string, string][] {
  const changed: [string, string][] = [];
  const sections = new Set([...before.keys(), ...after.keys()]);
  for (const section of sections) {
    const keys = new Set([...(before.get(section)?.keys() ?? []), ...(after.get(section)?.keys() ?? [])]);
    for (const key of keys) if (before.get(section)?.get(key) !== after.get(section)?.get(key)) changed.push([section, key]);
  }
  return changed;
}

/** The layers merged, later ones winning, into fresh maps. */
export function merge(layers: readonly IniSections[]): IniSections {
  const merged: IniSections = new Map();
  for (const layer of layers) {
    for (const [section, keys] of layer) {
      const target = merged.get(section);
      if (target === undefined) merged.set(section, new Map(keys));
      else for (const [key, value] of keys) target.set(key, value);
    }
  }
  return merged;
}

/**
 * The remembered readings, by kind then section then key (a key may be read as a string and as a
 * number). Only settings with a built-in default are remembered, so the maps stay small.
 */
export class Memo {
  readonly booleans = new Map<string, Map<string, unknown>>();
  readonly integers = new Map<string, Map<string, unknown>>();
  readonly authStrings = new Map<string, unknown>();
  readonly authBooleans = new Map<string, unknown>();
  readonly authIntegers = new Map<string, unknown>();
  readonly sections = new Map<string, Readonly<Record<string, string>>>();

  slot(kind: Map<string, Map<string, unknown>>, section: string): Map<string, unknown> {
    let byKey = kind.get(section);
    if (byKey === undefined) kind.set(section, (byKey = new Map()));
    return byKey;
  }
}
