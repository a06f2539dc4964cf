/**
 * The byte layout both key encodings share (`encode.ts`, CouchDB's ICU collation, and
 * `raw-encode.ts`, its raw collation): a type byte, then nothing (null, false, true), 8 bytes (a
 * number), bytes up to an END (a string), or values up to an END (an array; an object, its members'
 * names and values in turn). The two encodings use disjoint type bytes, so storage can walk a key
 * (array members, prefixes of array keys) without knowing which collation wrote it.
 */
export const END = 0x00;

/** Type bytes of the ICU encoding, in its order: null < false < true < numbers < strings < arrays < objects. */
export const ICU_TYPES = { null: 0x01, false: 0x02, true: 0x03, number: 0x04, string: 0x05, array: 0x06, object: 0x07 } as const;

/** Type bytes of the raw encoding, in Erlang's term order: numbers < false < null < true < objects < arrays < strings. */
export const RAW_TYPES = { number: 0x10, false: 0x11, null: 0x12, true: 0x13, object: 0x14, array: 0x15, string: 0x16 } as const;

const ATOMS = new Set<number>([ICU_TYPES.null, ICU_TYPES.false, ICU_TYPES.true, RAW_TYPES.false, RAW_TYPES.null, RAW_TYPES.true]);
const NUMBERS = new Set<number>([ICU_TYPES.number, RAW_TYPES.number]);
const STRINGS = new Set<number>([ICU_TYPES.string, RAW_TYPES.string]);

/** Whether an encoded key is an array (of either encoding). */
export function isArrayKey(key: Buffer): boolean {
  return key[0] === ICU_TYPES.array || key[0] === RAW_TYPES.array;
}

/**
 * Where the value starting at `at` of an encoded key ends (every value is self-delimiting); a bound
 * cut short inside a value (a prefix group's edge) ends at its last byte.
 */
export function valueEnd(key: Buffer, at: number): number {
  const type = key[at]!;
  if (ATOMS.has(type)) return at + 1;
  if (NUMBERS.has(type)) return Math.min(at + 9, key.length);
  let i = at + 1;
  if (STRINGS.has(type)) {
    while (i < key.length && key[i] !== END) i++;
    return i + 1;
  }
  while (i < key.length && key[i] !== END) i = valueEnd(key, i);
  return i + 1;
}
