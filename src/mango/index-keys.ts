/**
 * JSON values as bytes whose byte order is CouchDB's collation, so that SQLite and PostgreSQL order
 * (and range-scan) index rows without decoding them: null < false < true < numbers < strings <
 * arrays < objects; numbers by value; strings by code point (UTF-8 byte order), as
 * `selector-collation.ts` compares them; arrays and objects member by member, shorter first.
 *
 * Each value starts with a type byte (0x31..0x37); a string is its UTF-8 bytes with 0x00 and 0x01
 * escaped, ended by 0x00; a number is its IEEE 754 double, sign-flipped big-endian; arrays and
 * objects end with 0x00, which sorts before any member. An index key is its fields' values one
 * after the other, so the keys starting with a prefix are those in [prefix, prefix + 0xFF).
 *
 * @example
 * compareBytes(encodeKey([1]), encodeKey(['a'])) < 0 // numbers before strings
 */
import type { Json, JsonObject } from '../json/json.js';

const NULL = 0x31;
const FALSE = 0x32;
const TRUE = 0x33;
const NUMBER = 0x34;
const STRING = 0x35;
const ARRAY = 0x36;
const OBJECT = 0x37;
const END = 0x00;
/** Above every byte a key can hold after a given prefix. */
export const TOP = 0xff;

class ByteWriter {
  #bytes: number[] = [];

  push(...bytes: number[]): void {
    for (const byte of bytes) this.#bytes.push(byte);
  }

  string(value: string): void {
    for (const byte of Buffer.from(value, 'utf8')) {
      if (byte <= 0x01) this.#bytes.push(0x01, byte + 1);
      else this.#bytes.push(byte);
    }
    this.#bytes.push(END);
  }

  number(value: number): void {
    const buffer = Buffer.alloc(8);
    buffer.writeDoubleBE(value === 0 ? 0 : value);
    // Positive: flip the sign bit; negative: flip every bit, so byte order is numeric order.
    if ((buffer[0]! & 0x80) === 0) buffer[0] = buffer[0]! | 0x80;
    else for (let i = 0; i < 8; i++) buffer[i] = ~buffer[i]! & 0xff;
    this.push(...buffer);
  }

  value(value: Json): void {
    if (value === null) this.push(NULL);
    else if (value === false) this.push(FALSE);
    else if (value === true) this.push(TRUE);
    else if (typeof value === 'number') {
      this.push(NUMBER);
      this.number(value);
    } else if (typeof value === 'string') {
      this.push(STRING);
      this.string(value);
    } else if (Array.isArray(value)) {
      this.push(ARRAY);
      for (const item of value) this.value(item);
      this.push(END);
    } else {
      this.push(OBJECT);
      for (const [key, item] of Object.entries(value as JsonObject)) {
        this.string(key);
        this.value(item);
      }
      this.push(END);
    }
  }

  bytes(): Uint8Array {
    return Uint8Array.from(this.#bytes);
  }
}

/** The key of an index row: its fields' values in order. */
export function encodeKey(values: readonly Json[]): Uint8Array {
  const writer = new ByteWriter();
  for (const value of values) writer.value(value);
  return writer.bytes();
}

/** The smallest key greater than every key that starts with `prefix`. */
export function afterPrefix(prefix: Uint8Array): Uint8Array {
  const bytes = new Uint8Array(prefix.length + 1);
  bytes.set(prefix);
  bytes[prefix.length] = TOP;
  return bytes;
}

/** memcmp order, as both storage engines compare keys. */
export function compareBytes(a: Uint8Array, b: Uint8Array): number {
  return Buffer.compare(Buffer.from(a.buffer, a.byteOffset, a.byteLength), Buffer.from(b.buffer, b.byteOffset, b.byteLength));
}

/**
 * The longest key stored: a longer one keeps its first bytes, because PostgreSQL's B-tree entries are
 * limited (about 2.7 kB). Rows whose keys share those bytes then come in id order among themselves,
 * and a scan still finds them (see `storedBounds`); the selector, matched on every document read,
 * keeps the answer exact.
 */
export const MAX_KEY_BYTES = 1024;

export function storedKey(key: Uint8Array): Uint8Array {
  return key.length > MAX_KEY_BYTES ? key.slice(0, MAX_KEY_BYTES) : key;
}

/** Bounds over stored keys that hold every row whose full key is in [gte, lt). */
export function storedBounds(gte: Uint8Array | undefined, lt: Uint8Array | undefined): { gte?: Uint8Array; lt?: Uint8Array } {
  return {
    gte: gte === undefined ? undefined : storedKey(gte),
    lt: lt === undefined ? undefined : lt.length > MAX_KEY_BYTES ? afterPrefix(lt.slice(0, MAX_KEY_BYTES)) : lt,
  };
}
