/**
 * CouchDB's ini dialect, as read by `config.erl` (`parse_ini`, `remove_comments`) in CouchDB 3.5.
 * Generic ini parsers disagree with it on comments, `=` in keys and dotted sections, so a file that
 * works with CouchDB must mean the same thing here; every rule below mirrors a clause there.
 */

import { flatCopy } from '../json/flat-copy.js';

export type IniSections = Map<string, Map<string, string>>;

type IniLine =
  | { kind: 'blank' }
  | { kind: 'section'; name: string }
  // config.erl skips a bad header without leaving the current section, so it is not `blank`.
  | { kind: 'bad-section' }
  // An empty value is CouchDB's deletion marker; it still names a key line for the editor.
  | { kind: 'entry'; key: string; value: string }
  | { kind: 'junk' };

const LINE_BREAK = /\r\n|\n|\r|\x1a/;
const LINE_BREAK_KEPT = /(\r\n|\n|\r|\x1a)/;
const LINE_BREAK_END = /(?:\r\n|\n|\r|\x1a)$/;
const INLINE_COMMENT = / ;|\t;/;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

// Erlang's string:trim/1 strips Unicode Pattern_White_Space, which is narrower than
// String.prototype.trim (no NBSP, no BOM): a value ending in U+00A0 keeps it in CouchDB.
const PATTERN_WHITE_SPACE = new Set(['\t', '\n', '\v', '\f', '\r', ' ', '\u0085', '\u200e', '\u200f', '\u2028', '\u2029']);

function trim(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && PATTERN_WHITE_SPACE.has(text[start])) start++;
  while (end > start && PATTERN_WHITE_SPACE.has(text[end - 1])) end--;
  return text.slice(start, end);
}

function stripComment(raw: string): string {
  const line = trim(raw);
  if (line.startsWith(';')) return '';
  const comment = INLINE_COMMENT.exec(line);
  return comment === null ? line : trim(line.slice(0, comment.index));
}

function classify(raw: string): IniLine {
  const line = stripComment(raw);
  if (line === '') return { kind: 'blank' };
  if (line.startsWith('[')) {
    const close = line.indexOf(']', 1);
    if (close <= 1 || close !== line.length - 1) return { kind: 'bad-section' };
    return { kind: 'section', name: line.slice(1, close) };
  }
  // " = " wins over "=" so that keys such as JWT `rsa:kid=` can end in "=".
  const spaced = line.indexOf(' = ');
  if (spaced !== -1) return entry(line.slice(0, spaced), line.slice(spaced + 3));
  // A line starting with "=" has an empty key, which entry() turns away.
  const bare = line.indexOf('=');
  if (bare === -1) return { kind: 'junk' };
  return entry(line.slice(0, bare), line.slice(bare + 1));
}

function entry(rawKey: string, rawValue: string): IniLine {
  const key = trim(rawKey);
  return key === '' ? { kind: 'junk' } : { kind: 'entry', key, value: trim(rawValue) };
}

/** Calls `visit` for every line with the section it belongs to (undefined before the first header). */
function walk(lines: readonly string[], visit: (line: IniLine, section: string | undefined, index: number) => void): void {
  let section: string | undefined;
  lines.forEach((raw, index) => {
    const line = classify(raw);
    if (line.kind === 'section') section = line.name;
    visit(line, section, index);
  });
}

export function parseIni(text: string): IniSections {
  const sections: IniSections = new Map();
  walk(text.split(LINE_BREAK), (line, section) => {
    if (line.kind !== 'entry' || section === undefined || line.value === '') return;
    let keys = sections.get(section);
    if (keys === undefined) sections.set(flatCopy(section), (keys = new Map()));
    // Cut from the file's text: one non-Latin-1 character in a comment would leave them two-byte.
    keys.set(flatCopy(line.key), flatCopy(line.value));
  });
  return sections;
}

function formatEntry(key: string, value: string): string {
  return `${key} = ${value}`;
}

/**
 * True when `key = value`, written on its own line, reads back as exactly that key and value.
 * Rejected, among others: line breaks, surrounding whitespace, empty values (CouchDB's deletion
 * marker), " ;" or a leading ";" in the value (comments), keys containing " = " or starting with "[".
 */
export function isRepresentable(key: string, value: string): boolean {
  if (LINE_BREAK.test(key) || LINE_BREAK.test(value)) return false;
  // The file is UTF-8: a lone surrogate would be written as U+FFFD and read back as another value.
  if (LONE_SURROGATE.test(key) || LONE_SURROGATE.test(value)) return false;
  const line = classify(formatEntry(key, value));
  return line.kind === 'entry' && line.key === key && line.value === value && value !== '';
}

/** True when `[name]` reads back as a header for exactly that section. */
export function isRepresentableSection(name: string): boolean {
  if (LINE_BREAK.test(name) || LONE_SURROGATE.test(name)) return false;
  const line = classify(`[${name}]`);
  return line.kind === 'section' && line.name === name;
}

interface RawLine {
  text: string;
  eol: string;
}

function splitKeepingBreaks(text: string): RawLine[] {
  const parts = text.split(LINE_BREAK_KEPT);
  const lines: RawLine[] = [];
  for (let i = 0; i < parts.length; i += 2) lines.push({ text: parts[i], eol: parts[i + 1] ?? '' });
  return lines;
}

function newlineOf(text: string): string {
  return /\r\n|\n|\r/.exec(text)?.[0] ?? '\n';
}

/**
 * Returns `text` with `[section] key` set to `value`, or removed when `value` is undefined, leaving
 * every other line (comments, blank lines, line endings) as it was. Throws a RangeError when the
 * section, key or value cannot be written faithfully: callers check `isRepresentable` first, and
 * the throw keeps a value such as "x\n[admins]\n…" from ever reaching a file.
 */
export function setIniValue(text: string, section: string, key: string, value: string | undefined): string {
  if (value !== undefined && !(isRepresentableSection(section) && isRepresentable(key, value))) {
    throw new RangeError('setIniValue: section, key or value cannot be represented in an ini file');
  }
  const lines = splitKeepingBreaks(text);
  const matches: number[] = [];
  let lastHeader = -1;
  let lastEntry = -1;
  walk(
    lines.map((line) => line.text),
    (line, current, index) => {
      if (current !== section) return;
      if (line.kind === 'section') lastHeader = index;
      if (line.kind !== 'entry') return;
      lastEntry = index;
      if (line.key === key) matches.push(index);
    },
  );

  if (value === undefined) {
    if (matches.length === 0) return text;
    const doomed = new Set(matches);
    return join(lines.filter((_, index) => !doomed.has(index)));
  }

  const newline = newlineOf(text);
  const written = formatEntry(key, value);
  if (matches.length > 0) {
    // The last line is the effective one; earlier duplicates would only mislead a reader.
    const kept = matches[matches.length - 1];
    lines[kept].text = written;
    const doomed = new Set(matches.slice(0, -1));
    return join(lines.filter((_, index) => !doomed.has(index)));
  }
  const anchor = lastEntry !== -1 ? lastEntry : lastHeader;
  if (anchor !== -1) {
    const after = lines[anchor];
    const inserted: RawLine = { text: written, eol: after.eol === '' ? '' : newline };
    if (after.eol === '') after.eol = newline;
    lines.splice(anchor + 1, 0, inserted);
    return join(lines);
  }
  let prefix = text;
  if (prefix !== '') {
    if (!LINE_BREAK_END.test(prefix)) prefix += newline;
    prefix += newline;
  }
  return `${prefix}[${section}]${newline}${written}${newline}`;
}

function join(lines: readonly RawLine[]): string {
  return lines.map((line) => line.text + line.eol).join('');
}
