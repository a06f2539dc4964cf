/**
 * Per-character collation weights of ICU's root collator (the one CouchDB's `couch_ejson_compare`
 * opens), read out of `Intl.Collator` (Node's ICU) once: every BMP character is sorted once and ranked at the three
 * strengths, and the ranks become the weights of a three-level sort key as the Unicode Collation
 * Algorithm builds one. Characters that expand (æ, ß) or contract in ICU get one weight of their own,
 * so strings holding them may sort slightly apart from ICU (docs/views.md).
 */

export interface Weights {
  /** Primary weight per UTF-16 code unit; 0: ignorable at that level. */
  readonly primary: Uint32Array;
  /** Rank within the character's primary group (1 for the plain character); 0: ignorable. */
  readonly secondary: Uint16Array;
  /** Rank within the character's secondary group (lower case first); 0: ignorable. */
  readonly tertiary: Uint16Array;
  /** Primary weights of code points past the BMP (see `supplementaryPrimary`), filled on use. */
  readonly supplementary: Map<number, readonly [number, number]>;
  /** One character per primary weight, in order, to place supplementary characters among them. */
  readonly representatives: readonly string[];
}

const BMP = 0x10000;

function bmpCharacters(): string[] {
  const chars: string[] = [];
  for (let code = 0; code < BMP; code++) if (code < 0xd800 || code > 0xdfff) chars.push(String.fromCharCode(code));
  return chars;
}

const collators = {
  base: new Intl.Collator('und', { sensitivity: 'base', usage: 'sort' }),
  accent: new Intl.Collator('und', { sensitivity: 'accent', usage: 'sort' }),
  variant: new Intl.Collator('und', { sensitivity: 'variant', usage: 'sort' }),
};

/**
 * Ranks `sorted` (the characters in the full, variant-strength order) at one strength: equal
 * characters share a rank, ignorable ones get 0. A weaker strength's order is the same order with
 * ties, so one sort serves all three strengths and each only compares neighbours.
 */
function rank(sorted: readonly string[], sensitivity: keyof typeof collators, into: (char: string, rank: number, first: boolean) => void): void {
  const collator = collators[sensitivity];
  let current = 0;
  let previous: string | undefined;
  for (const char of sorted) {
    if (collator.compare(char, '') === 0) {
      into(char, 0, false);
      continue;
    }
    const first = previous === undefined || collator.compare(previous, char) !== 0;
    if (first) current++;
    previous = char;
    into(char, current, first);
  }
}

/** Ranks within groups: `groupOf` names the group (the next-stronger level's weight). */
function rankWithinGroups(full: Uint32Array, groupOf: (code: number) => number, target: Uint16Array): void {
  const next = new Map<number, { last: number; rank: number }>();
  const order = [...full.keys()].filter((code) => full[code]! > 0).sort((a, b) => full[a]! - full[b]!);
  for (const code of order) {
    const group = groupOf(code);
    const state = next.get(group);
    if (state === undefined) next.set(group, { last: full[code]!, rank: 1 });
    else if (state.last !== full[code]) next.set(group, { last: full[code]!, rank: state.rank + 1 });
    target[code] = next.get(group)!.rank;
  }
}

let built: Weights | undefined;

/** The weight tables, built on first use (about 0.1 s). */
export function collationWeights(): Weights {
  if (built !== undefined) return built;
  const chars = bmpCharacters().sort(collators.variant.compare);
  const primary = new Uint32Array(BMP);
  const accent = new Uint32Array(BMP);
  const variant = new Uint32Array(BMP);
  const representatives: string[] = [''];
  rank(chars, 'base', (char, weight, first) => {
    // Even weights for BMP characters: the odd ones between them are for supplementary characters.
    primary[char.charCodeAt(0)] = weight * 2;
    if (first) representatives.push(char);
  });
  rank(chars, 'accent', (char, weight) => (accent[char.charCodeAt(0)] = weight));
  rank(chars, 'variant', (char, weight) => (variant[char.charCodeAt(0)] = weight));
  const secondary = new Uint16Array(BMP);
  const tertiary = new Uint16Array(BMP);
  // Primary-ignorable marks form one group of their own; their ranks start above a plain letter's 1.
  rankWithinGroups(accent, (code) => primary[code]!, secondary);
  for (let code = 0; code < BMP; code++) if (primary[code] === 0 && secondary[code]! > 0) secondary[code] = secondary[code]! + 1;
  rankWithinGroups(variant, (code) => accent[code]!, tertiary);
  built = { primary, secondary, tertiary, supplementary: new Map(), representatives };
  return built;
}

/**
 * Two primary weights for a code point past the BMP: where ICU places it among the BMP characters
 * (their weight, or the odd weight just above the one below it), then the code point itself so that
 * distinct characters placed alike still differ.
 */
export function supplementaryPrimary(weights: Weights, code: number): readonly [number, number] {
  const known = weights.supplementary.get(code);
  if (known !== undefined) return known;
  const char = String.fromCodePoint(code);
  const { representatives } = weights;
  let low = 1;
  let high = representatives.length - 1;
  let placed = 1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    const order = collators.base.compare(representatives[middle]!, char);
    if (order === 0) {
      placed = middle * 2;
      break;
    }
    if (order < 0) {
      placed = middle * 2 + 1;
      low = middle + 1;
    } else high = middle - 1;
  }
  const result = [placed, code - 0xffff] as const;
  if (weights.supplementary.size < 100_000) weights.supplementary.set(code, result);
  return result;
}
