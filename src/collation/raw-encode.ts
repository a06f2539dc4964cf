/**
 * CouchDB's raw collation (`raw-compare.ts`) as bytes: two encoded keys compare (memcmp) as
 * `compareRaw` orders them. The layout is `key-layout.ts`'s, with the raw type bytes: numbers as
 * `encode.ts` writes them, strings as their UTF-8 bytes with 0x00 and 0x01 escaped (0x01 0x01 and
 * 0x01 0x02) before the END, so a string sorts before every string it is a prefix of and no END
 * appears inside it.
 */
import type { Json, JsonObject } from '../json/json.js';
import { END, RAW_TYPES } from './key-layout.js';

const ESCAPE = 0x01;

function pushNumber(out: number[], value: number): void {
  const bytes = Buffer.alloc(8);
  bytes.writeDoubleBE(value === 0 ? 0 : value);
  // Positive: set the sign bit; negative: flip every bit. Then bytes compare as the numbers do.
  if (bytes[0]! & 0x80) for (let i = 0; i < 8; i++) out.push(~bytes[i]! & 0xff);
  else out.push(bytes[0]! | 0x80, ...bytes.subarray(1));
}

function pushString(out: number[], text: string): void {
  out.push(RAW_TYPES.string);
  for (const byte of Buffer.from(text, 'utf8')) {
    if (byte <= ESCAPE) out.push(ESCAPE, byte + 1);
    else out.push(byte);
  }
  out.push(END);
}

function write(out: number[], value: Json): void {
  if (value === null) out.push(RAW_TYPES.null);
  else if (value === false) out.push(RAW_TYPES.false);
  else if (value === true) out.push(RAW_TYPES.true);
  else if (typeof value === 'number') {
    out.push(RAW_TYPES.number);
    pushNumber(out, value);
  } else if (typeof value === 'string') pushString(out, value);
  else if (Array.isArray(value)) {
    out.push(RAW_TYPES.array);
    for (const item of value) write(out, item);
    out.push(END);
  } else {
    out.push(RAW_TYPES.object);
    for (const [name, member] of Object.entries(value as JsonObject)) {
      pushString(out, name);
      write(out, member);
    }
    out.push(END);
  }
}

/** The raw sort key of a JSON value. */
export function encodeRaw(key: Json): Buffer {
  const out: number[] = [];
  write(out, key);
  return Buffer.from(out);
}
