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

/** A growing buffer the fast EJSON encoder writes into (one allocation per few kilobytes, not per term). */
class TermWriter {
  #buffer = Buffer.allocUnsafe(1024);
  #at = 0;

  #room(bytes: number): void {
    if (this.#at + bytes <= this.#buffer.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.#buffer.length * 2, this.#at + bytes));
    this.#buffer.copy(grown, 0, 0, this.#at);
    this.#buffer = grown;
  }

  byte(value: number): void {
    this.#room(1);
    this.#buffer[this.#at++] = value;
  }

  u32(value: number): void {
    this.#room(4);
    this.#buffer.writeUInt32BE(value, this.#at);
    this.#at += 4;
  }

  bytes(value: Buffer): void {
    this.#room(value.length);
    value.copy(this.#buffer, this.#at);
    this.#at += value.length;
  }

  /** BINARY_EXT of the text's UTF-8 bytes. */
  binary(text: string): void {
    this.#room(5 + text.length * 3);
    this.#buffer[this.#at] = 109;
    const written = this.#buffer.write(text, this.#at + 5, 'utf8');
    this.#buffer.writeUInt32BE(written, this.#at + 1);
    this.#at += 5 + written;
  }

  /** SMALL_INTEGER_EXT or INTEGER_EXT in place; larger magnitudes as `integer` builds them. */
  integer(value: number): void {
    this.#room(5);
    if (value >= 0 && value <= 255) {
      this.#buffer[this.#at++] = 97;
      this.#buffer[this.#at++] = value;
    } else if (value >= -(2 ** 31) && value < 2 ** 31) {
      this.#buffer[this.#at] = 98;
      this.#buffer.writeInt32BE(value, this.#at + 1);
      this.#at += 5;
    } else {
      this.bytes(integer(value));
    }
  }

  float(value: number): void {
    this.#room(9);
    this.#buffer[this.#at] = 70;
    this.#buffer.writeDoubleBE(value, this.#at + 1);
    this.#at += 9;
  }

  done(): Buffer {
    return this.#buffer.subarray(0, this.#at);
  }
}

const ATOMS = { null: encode(atom('null')), true: encode(atom('true')), false: encode(atom('false')) };

function writeEjson(writer: TermWriter, value: unknown): void {
  if (value === null) return writer.bytes(ATOMS.null);
  if (value === true) return writer.bytes(ATOMS.true);
  if (value === false) return writer.bytes(ATOMS.false);
  if (typeof value === 'string') return writer.binary(value);
  if (typeof value === 'number') return Number.isInteger(value) ? writer.integer(value) : writer.float(value);
  if (Array.isArray(value)) {
    if (value.length > 0) {
      writer.byte(108);
      writer.u32(value.length);
      for (const item of value) writeEjson(writer, item);
    }
    return writer.byte(106);
  }
  // `{[{Key, Value}, …]}`: a 1-tuple holding the list of 2-tuples.
  const object = value as Record<string, unknown>;
  const keys = Object.keys(object);
  writer.byte(104);
  writer.byte(1);
  if (keys.length > 0) {
    writer.byte(108);
    writer.u32(keys.length);
    for (const key of keys) {
      writer.byte(104);
      writer.byte(2);
      writer.binary(key);
      writeEjson(writer, object[key]);
    }
  }
  writer.byte(106);
}

/** `term_to_binary([Head…, Ejson, Tail…])`: terms around one JSON value encoded as EJSON, without building its term tree. */
export function termToBinaryWithEjson(head: readonly Term[], ejsonValue: unknown, tail: readonly Term[]): Buffer {
  const writer = new TermWriter();
  writer.byte(131);
  writer.byte(108);
  writer.u32(head.length + 1 + tail.length);
  for (const term of head) writer.bytes(encode(term));
  writeEjson(writer, ejsonValue);
  for (const term of tail) writer.bytes(encode(term));
  writer.byte(106);
  return writer.done();
}
