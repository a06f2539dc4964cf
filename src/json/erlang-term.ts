/**
 * Erlang's external term format, as `term_to_binary(T, [{minor_version, 1}])` writes it: the bytes
 * CouchDB hashes into a replication id. Only the shapes a replication id holds are needed: atoms,
 * binaries, strings (lists of character codes), lists, tuples, integers and floats.
 */

export type Term =
  | { atom: string }
  | { binary: Buffer | string }
  | { string: string }
  | { list: Term[] }
  | { tuple: Term[] }
  | { integer: number }
  | { float: number };

export const atom = (name: string): Term => ({ atom: name });
export const binary = (value: string): Term => ({ binary: value });
export const string = (value: string): Term => ({ string: value });
export const list = (items: Term[]): Term => ({ list: items });
export const tuple = (items: Term[]): Term => ({ tuple: items });

function u16(value: number): Buffer {
  const buffer = Buffer.alloc(2);
  buffer.writeUInt16BE(value);
  return buffer;
}

function u32(value: number): Buffer {
  const buffer = Buffer.alloc(4);
  buffer.writeUInt32BE(value);
  return buffer;
}

function integer(value: number): Buffer {
  if (value >= 0 && value <= 255) return Buffer.from([97, value]);
  if (value >= -(2 ** 31) && value < 2 ** 31) {
    const buffer = Buffer.alloc(5);
    buffer[0] = 98;
    buffer.writeInt32BE(value, 1);
    return buffer;
  }
  // SMALL_BIG_EXT: sign byte, then the magnitude in little-endian bytes.
  let magnitude = BigInt(Math.abs(value));
  const digits: number[] = [];
  while (magnitude > 0n) {
    digits.push(Number(magnitude & 255n));
    magnitude >>= 8n;
  }
  return Buffer.concat([Buffer.from([110, digits.length, value < 0 ? 1 : 0]), Buffer.from(digits)]);
}

/** A list of character codes: STRING_EXT when every code is a byte, else a proper list of integers. */
function charList(value: string): Buffer {
  const codes = [...value].map((char) => char.codePointAt(0)!);
  if (codes.length === 0) return Buffer.from([106]);
  if (codes.length < 65536 && codes.every((code) => code <= 255)) return Buffer.concat([Buffer.from([107]), u16(codes.length), Buffer.from(codes)]);
  return encodeList(codes.map((code) => ({ integer: code })));
}

function encodeList(items: Term[]): Buffer {
  if (items.length === 0) return Buffer.from([106]);
  return Buffer.concat([Buffer.from([108]), u32(items.length), ...items.map(encode), Buffer.from([106])]);
}

function encode(term: Term): Buffer {
  if ('atom' in term) {
    const bytes = Buffer.from(term.atom, 'latin1');
    return Buffer.concat([Buffer.from([100]), u16(bytes.length), bytes]);
  }
  if ('binary' in term) {
    const bytes = typeof term.binary === 'string' ? Buffer.from(term.binary, 'utf8') : term.binary;
    return Buffer.concat([Buffer.from([109]), u32(bytes.length), bytes]);
  }
  if ('string' in term) return charList(term.string);
  if ('list' in term) return encodeList(term.list);
  if ('tuple' in term) {
    const head = term.tuple.length < 256 ? Buffer.from([104, term.tuple.length]) : Buffer.concat([Buffer.from([105]), u32(term.tuple.length)]);
    return Buffer.concat([head, ...term.tuple.map(encode)]);
  }
  if ('integer' in term) return integer(term.integer);
  const buffer = Buffer.alloc(9);
  buffer[0] = 70;
  buffer.writeDoubleBE(term.float, 1);
  return buffer;
}

/** `term_to_binary(Term, [{minor_version, 1}])`. */
export function termToBinary(term: Term): Buffer {
  return Buffer.concat([Buffer.from([131]), encode(term)]);
}

/**
 * A JSON value as CouchDB's EJSON term (jiffy's decoding): objects are `{[{Key, Value}]}`, strings
 * binaries, `true`/`false`/`null` atoms, arrays lists, numbers integers or floats.
 */
export function ejson(value: unknown): Term {
  if (value === null) return atom('null');
  if (value === true || value === false) return atom(String(value));
  if (typeof value === 'string') return binary(value);
  if (typeof value === 'number') return Number.isInteger(value) ? { integer: value } : { float: value };
  if (Array.isArray(value)) return list(value.map(ejson));
  const entries = Object.entries(value as Record<string, unknown>);
  return tuple([list(entries.map(([key, item]) => tuple([binary(key), ejson(item)])))]);
}
