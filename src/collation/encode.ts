/**
 * CouchDB's collation (`couch_ejson_compare`) as bytes: two encoded keys compare (memcmp, as SQLite
 * compares BLOBs and PostgreSQL `bytea`) as the keys collate: null < false < true < numbers <
 * strings (ICU root collation) < arrays < objects, arrays and objects member by member, a prefix
 * before what extends it. Keys ICU holds equal ("c" and "c\u200B") encode equal, as CouchDB groups
 * and ranges them together. `compare.ts` compares with these same bytes.
 *
 * Every encoded value is prefix-free (a type byte, then fixed-size or END-terminated content), so a
 * sequence of values encoded one after the other compares value by value (Mango's compound index
 * keys), and every key extending a sequence lies in [sequence, sequence + 0xFF).
 */
import type { Json, JsonObject } from '../json/json.js';
import { END, ICU_TYPES } from './key-layout.js';
import { collationWeights, supplementaryPrimary, type Weights } from './weights.js';

const LEVEL = 0x01;
const { null: NULL, false: FALSE, true: TRUE, number: NUMBER, string: STRING, array: ARRAY, object: OBJECT } = ICU_TYPES;
/** Weight digits avoid 0 (END) and 1 (LEVEL), so a shorter level sorts before a longer one. */
const DIGIT_BASE = 254;

class ByteWriter {
  bytes = Buffer.allocUnsafe(64);
  length = 0;

  push(byte: number): void {
    if (this.length === this.bytes.length) this.#grow(1);
    this.bytes[this.length++] = byte;
  }

  pushDouble(value: number): void {
    this.#grow(8);
    this.bytes.writeDoubleBE(value === 0 ? 0 : value, this.length);
    // Positive: set the sign bit; negative: flip every bit. Then bytes compare as the numbers do.
    if (this.bytes[this.length]! & 0x80) for (let i = 0; i < 8; i++) this.bytes[this.length + i] = ~this.bytes[this.length + i]! & 0xff;
    else this.bytes[this.length] = this.bytes[this.length]! | 0x80;
    this.length += 8;
  }

  weight(value: number, digits: 2 | 3): void {
    if (digits === 3) this.push(2 + Math.floor(value / (DIGIT_BASE * DIGIT_BASE)));
    this.push(2 + (Math.floor(value / DIGIT_BASE) % DIGIT_BASE));
    this.push(2 + (value % DIGIT_BASE));
  }

  #grow(extra: number): void {
    if (this.length + extra <= this.bytes.length) return;
    const larger = Buffer.allocUnsafe(Math.max(this.bytes.length * 2, this.length + extra));
    this.bytes.copy(larger, 0, 0, this.length);
    this.bytes = larger;
  }
}

// eslint-disable-next-line no-control-regex
const ASCII = /^[\u0000-\u007f]*$/;

function writeString(out: ByteWriter, text: string, weights: Weights): void {
  const normalized = ASCII.test(text) ? text : text.normalize('NFD');
  const codes: number[] = [];
  for (const char of normalized) codes.push(char.codePointAt(0)!);
  out.push(STRING);
  for (const code of codes) {
    if (code >= 0x10000) {
      const [placed, self] = supplementaryPrimary(weights, code);
      out.weight(placed, 3);
      out.weight(self, 3);
    } else if (weights.primary[code]! > 0) out.weight(weights.primary[code]!, 3);
  }
  out.push(LEVEL);
  for (const code of codes) {
    const secondary = code < 0x10000 ? weights.secondary[code]! : 1;
    if (secondary > 0) out.weight(secondary, 2);
  }
  out.push(LEVEL);
  for (const code of codes) {
    const tertiary = code < 0x10000 ? weights.tertiary[code]! : 1;
    if (tertiary > 0) out.weight(tertiary, 2);
  }
  out.push(END);
}

function write(out: ByteWriter, value: Json, weights: Weights): void {
  if (value === null) out.push(NULL);
  else if (value === false) out.push(FALSE);
  else if (value === true) out.push(TRUE);
  else if (typeof value === 'number') {
    out.push(NUMBER);
    out.pushDouble(value);
  } else if (typeof value === 'string') writeString(out, value, weights);
  else if (Array.isArray(value)) {
    out.push(ARRAY);
    for (const item of value) write(out, item, weights);
    out.push(END);
  } else {
    out.push(OBJECT);
    for (const [name, member] of Object.entries(value as JsonObject)) {
      writeString(out, name, weights);
      write(out, member, weights);
    }
    out.push(END);
  }
}

let weights: Weights | undefined;

/** The sort key of a JSON value. */
export function encode(key: Json): Buffer {
  const out = new ByteWriter();
  write(out, key, (weights ??= collationWeights()));
  return out.bytes.subarray(0, out.length);
}

/** The sort keys of `values`, one after the other: compares as the values do, first to last. */
export function encodeAll(values: readonly Json[]): Buffer {
  const out = new ByteWriter();
  for (const value of values) write(out, value, (weights ??= collationWeights()));
  return out.bytes.subarray(0, out.length);
}

