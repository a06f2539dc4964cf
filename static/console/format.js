// Formatting for the admin console: sizes, counts, times and lists typed by people.

/**
 * "1.5 MiB", "812 B".
 *
 * @param {unknown} bytes
 */
export function formatBytes(bytes) {
  if (typeof bytes !== 'number' || !Number.isFinite(bytes)) return '—';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

/**
 * "12,345" in the page's locale; '—' for anything that is not a number.
 *
 * @param {unknown} value
 */
export function formatNumber(value) {
  if (typeof value !== 'number' || !Number.isFinite(value)) return '—';
  return value.toLocaleString(undefined, { maximumFractionDigits: 2 });
}

/**
 * A time given in seconds since 1970 (as `_active_tasks` does) or as an ISO string.
 *
 * @param {unknown} value
 */
export function formatTime(value) {
  const date = typeof value === 'number' ? new Date(value * 1000) : typeof value === 'string' ? new Date(value) : undefined;
  if (date === undefined || Number.isNaN(date.getTime())) return '—';
  return date.toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
}

/**
 * Names or roles typed as "a, b c": split on commas and white space, empty parts dropped,
 * duplicates removed, order kept.
 *
 * @param {string} text
 * @returns {string[]}
 */
export function parseList(text) {
  return [...new Set(text.split(/[\s,]+/).filter((part) => part !== ''))];
}

/**
 * The reverse of parseList for an editable field.
 *
 * @param {unknown} list
 */
export function listText(list) {
  return Array.isArray(list) ? list.filter((item) => typeof item === 'string').join(', ') : '';
}

/**
 * A value of the configuration or of a document shown in one line.
 *
 * @param {unknown} value
 */
export function oneLine(value) {
  if (typeof value === 'string') return value;
  return JSON.stringify(value) ?? String(value);
}

/**
 * Parses JSON typed by a person; the error names the position when the browser gives one.
 *
 * @param {string} text
 * @returns {{ ok: true, value: any } | { ok: false, error: string }}
 */
export function parseJson(text) {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error.message : String(error) };
  }
}
