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

/** SMALL_BIG_EXT: sign byte, then the magnitude in little-endian bytes. */
function bigInteger(value: number): Buffer {
  let magnitude = BigInt(Math.abs(value));
  const digits: number[] = [];
  while (magnitude > 0n) {
    digits.push(Number(magnitude & 255n));
    magnitude >>= 8n;
  }
  return Buffer.concat([Buffer.from([110, digits.length, value < 0 ? 1 : 0]), Buffer.from(digits)]);
}

/** A growing buffer the encoder writes every term into (one allocation per few kilobytes, not per term). */
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

  u16(value: number): void {
    this.#room(2);
    this.#buffer.writeUInt16BE(value, this.#at);
    this.#at += 2;
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
      this.bytes(bigInteger(value));
    }
  }

  float(value: number): void {
    this.#room(9);
    this.#buffer[this.#at] = 70;
    this.#buffer.writeDoubleBE(value, this.#at + 1);
    this.#at += 9;
  }

  /** ATOM_EXT of a Latin-1 name. */
  atom(name: string): void {
    this.#room(3 + name.length);
    this.#buffer[this.#at] = 100;
    this.#buffer.writeUInt16BE(name.length, this.#at + 1);
    this.#buffer.write(name, this.#at + 3, 'latin1');
    this.#at += 3 + name.length;
  }

  /** A list of character codes: STRING_EXT when every code is a byte, else a proper list of integers. */
  charList(value: string): void {
    const codes = Array.from(value, (char) => char.codePointAt(0)!);
    if (codes.length === 0) return this.byte(106);
    if (codes.length < 65536 && codes.every((code) => code <= 255)) {
      this.byte(107);
      this.u16(codes.length);
      return this.bytes(Buffer.from(codes));
    }
    this.list(codes.map((code) => ({ integer: code })));
  }

  list(items: readonly Term[]): void {
    if (items.length > 0) {
      this.byte(108);
      this.u32(items.length);
      for (const item of items) this.term(item);
    }
    this.byte(106);
  }

  term(term: Term): void {
    if ('atom' in term) return this.atom(term.atom);
    if ('binary' in term) {
      if (typeof term.binary === 'string') return this.binary(term.binary);
      this.byte(109);
      this.u32(term.binary.length);
      return this.bytes(term.binary);
    }
    if ('string' in term) return this.charList(term.string);
    if ('list' in term) return this.list(term.list);
    if ('tuple' in term) {
      if (term.tuple.length < 256) {
        this.byte(104);
        this.byte(term.tuple.length);
      } else {
        this.byte(105);
        this.u32(term.tuple.length);
      }
      for (const item of term.tuple) this.term(item);
      return;
    }
    if ('integer' in term) return this.integer(term.integer);
    this.float(term.float);
  }

  done(): Buffer {
    return this.#buffer.subarray(0, this.#at);
  }
}

function writeEjson(writer: TermWriter, value: unknown, omitKey?: string): void {
  if (value === null) return writer.atom('null');
  if (value === true) return writer.atom('true');
  if (value === false) return writer.atom('false');
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
  let keys = Object.keys(object);
  if (omitKey !== undefined && Object.hasOwn(object, omitKey)) keys = keys.filter((key) => key !== omitKey);
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

/** `term_to_binary(Term, [{minor_version, 1}])`. */
export function termToBinary(term: Term): Buffer {
  const writer = new TermWriter();
  writer.byte(131);
  writer.term(term);
  return writer.done();
}

/**
 * `term_to_binary([Head…, Ejson, Tail…])`: terms around one JSON value encoded as EJSON, without
 * building its term tree. `omitKey`, a member of that value's top-level object, is left out (as if
 * removed from a copy: a revision's body without its `_attachments`, with no copy per revision).
 */
export function termToBinaryWithEjson(head: readonly Term[], ejsonValue: unknown, tail: readonly Term[], omitKey?: string): Buffer {
  const writer = new TermWriter();
  writer.byte(131);
  writer.byte(108);
  writer.u32(head.length + 1 + tail.length);
  for (const term of head) writer.term(term);
  writeEjson(writer, ejsonValue, omitKey);
  for (const term of tail) writer.term(term);
  writer.byte(106);
  return writer.done();
}
