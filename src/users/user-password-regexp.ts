/**
 * `[chttpd_auth] password_regexp`: an Erlang term, e.g.
 * `[{".{10,}", "At least 10 characters."}, "[A-Z]+", {"\\d+"}]`.
 *
 * CouchDB reads it with `erl_scan` + `erl_parse:parse_term`, so this module understands the part of
 * Erlang's term syntax a sensible value can use (strings with Erlang escapes, adjacent string
 * concatenation, char literals, integers, floats, atoms, lists, tuples). Anything else, including
 * terms Erlang would parse but CouchDB rejects anyway (binaries, maps), counts as unparsable: the
 * server then refuses to hash passwords, as CouchDB does.
 */

interface PasswordRequirement {
  regex: RegExp;
  /** Text appended to "Password does not conform to requirements." when this item fails. */
  reason?: string;
}

type Term =
  | { kind: 'int'; value: number }
  | { kind: 'float' }
  | { kind: 'atom' }
  // An Erlang string is a list of character codes; keeping it as such makes `""` and `[]` the same
  // term and a top-level string a list of integers, exactly as Erlang sees them.
  | { kind: 'list'; items: Term[] }
  | { kind: 'tuple'; items: Term[] };

class Unparsable extends Error {}

/**
 * Parses the setting; undefined when it is not an Erlang list of requirements or an item's regex
 * does not compile; `[]` for an empty setting.
 *
 * @example parsePasswordRegexp('[{".{10,}", "Too short."}]') // → [{ regex: /.{10,}/, reason: 'Too short.' }]
 */
export function parsePasswordRegexp(setting: string): PasswordRequirement[] | undefined {
  // CouchDB short-cuts exactly these two spellings before parsing.
  if (setting === '' || setting === '[]') return [];
  let term: Term;
  try {
    term = new TermParser(setting).parseAll();
  } catch (error) {
    if (error instanceof Unparsable) return undefined;
    throw error;
  }
  if (term.kind !== 'list') return undefined;
  const requirements: PasswordRequirement[] = [];
  for (const item of term.items) {
    const requirement = toRequirement(item);
    if (!requirement) return undefined;
    requirements.push(requirement);
  }
  return requirements;
}

/** CouchDB's `get_password_regexp_and_error_msg/1`: `"re"`, `{"re"}`, `{"re", "reason"}`, `{"re", _}`. */
function toRequirement(item: Term): PasswordRequirement | undefined {
  let source: string | undefined;
  let reason: string | undefined;
  if (item.kind === 'tuple' && (item.items.length === 1 || item.items.length === 2)) {
    source = asString(item.items[0]!);
    // A reason that is not a non-empty string is ignored rather than refused (CouchDB does the same).
    if (item.items.length === 2) reason = asString(item.items[1]!) || undefined;
  } else {
    source = asString(item);
  }
  if (source === undefined) return undefined;
  let regex: RegExp;
  try {
    regex = new RegExp(source);
  } catch {
    return undefined;
  }
  return reason === undefined ? { regex } : { regex, reason };
}

function asString(term: Term): string | undefined {
  if (term.kind !== 'list') return undefined;
  const codes: number[] = [];
  for (const item of term.items) {
    if (item.kind !== 'int' || item.value < 0 || item.value > 0x10ffff) return undefined;
    codes.push(item.value);
  }
  return String.fromCodePoint(...codes);
}

const SIMPLE_ESCAPES: Readonly<Record<string, number>> = {
  b: 8,
  d: 127,
  e: 27,
  f: 12,
  n: 10,
  r: 13,
  s: 32,
  t: 9,
  v: 11,
};

class TermParser {
  readonly #text: string;
  #at = 0;

  constructor(text: string) {
    this.#text = text;
  }

  parseAll(): Term {
    const term = this.#term();
    this.#skipSpace();
    // erl_parse sees the value followed by the "." CouchDB appends; nothing else may follow.
    if (this.#at !== this.#text.length) throw new Unparsable();
    return term;
  }

  #term(): Term {
    this.#skipSpace();
    const char = this.#text[this.#at];
    if (char === undefined) throw new Unparsable();
    if (char === '[') return { kind: 'list', items: this.#sequence('[', ']') };
    if (char === '{') return { kind: 'tuple', items: this.#sequence('{', '}') };
    if (char === '"') return this.#strings();
    if (char === '$') return { kind: 'int', value: this.#charLiteral() };
    if (char === "'") return this.#quotedAtom();
    if (char === '-' || char === '+' || isDigit(char)) return this.#number();
    if (/[a-z]/.test(char)) {
      this.#at += /^[a-z][A-Za-z0-9_@]*/.exec(this.#text.slice(this.#at))![0].length;
      return { kind: 'atom' };
    }
    throw new Unparsable();
  }

  #sequence(open: string, close: string): Term[] {
    this.#expect(open);
    const items: Term[] = [];
    this.#skipSpace();
    if (this.#text[this.#at] === close) {
      this.#at += 1;
      return items;
    }
    for (;;) {
      items.push(this.#term());
      this.#skipSpace();
      const char = this.#text[this.#at];
      this.#at += 1;
      if (char === close) return items;
      if (char !== ',') throw new Unparsable();
    }
  }

  /** One or more adjacent string literals, which Erlang concatenates. */
  #strings(): Term {
    const items: Term[] = [];
    do {
      this.#expect('"');
      for (;;) {
        const char = this.#text[this.#at];
        if (char === undefined) throw new Unparsable();
        if (char === '"') {
          this.#at += 1;
          break;
        }
        items.push({ kind: 'int', value: char === '\\' ? this.#escape() : this.#codePoint() });
      }
      this.#skipSpace();
    } while (this.#text[this.#at] === '"');
    return { kind: 'list', items };
  }

  #charLiteral(): number {
    this.#expect('$');
    const char = this.#text[this.#at];
    if (char === undefined) throw new Unparsable();
    return char === '\\' ? this.#escape() : this.#codePoint();
  }

  #quotedAtom(): Term {
    this.#expect("'");
    for (;;) {
      const char = this.#text[this.#at];
      if (char === undefined) throw new Unparsable();
      if (char === "'") {
        this.#at += 1;
        return { kind: 'atom' };
      }
      if (char === '\\') this.#escape();
      else this.#codePoint();
    }
  }

  #number(): Term {
    const match = /^[-+]?(?:(\d+)#([0-9A-Za-z]+)|\d+(\.\d+(?:[eE][-+]?\d+)?)?)/.exec(this.#text.slice(this.#at));
    if (!match) throw new Unparsable();
    this.#at += match[0].length;
    if (match[3] !== undefined) return { kind: 'float' };
    const sign = match[0].startsWith('-') ? -1 : 1;
    if (match[1] !== undefined) {
      const base = Number(match[1]);
      const digits = match[2]!.toLowerCase();
      if (base < 2 || base > 36 || [...digits].some((digit) => parseInt(digit, 36) >= base)) throw new Unparsable();
      return { kind: 'int', value: sign * parseInt(digits, base) };
    }
    return { kind: 'int', value: sign * Number(match[0].replace(/^[-+]/, '')) };
  }

  /** Erlang escape sequences (an unknown escape stands for the character itself). */
  #escape(): number {
    this.#expect('\\');
    const char = this.#text[this.#at];
    if (char === undefined) throw new Unparsable();
    const rest = this.#text.slice(this.#at);
    const octal = /^[0-7]{1,3}/.exec(rest);
    if (octal) {
      this.#at += octal[0].length;
      return parseInt(octal[0], 8);
    }
    const hex = /^x(?:\{([0-9A-Fa-f]+)\}|([0-9A-Fa-f]{2}))/.exec(rest);
    if (hex) {
      this.#at += hex[0].length;
      const value = parseInt(hex[1] ?? hex[2]!, 16);
      if (value > 0x10ffff) throw new Unparsable();
      return value;
    }
    if (char === 'x') throw new Unparsable();
    if (char === '^') {
      const control = this.#text[this.#at + 1];
      if (control === undefined) throw new Unparsable();
      this.#at += 2;
      return control.charCodeAt(0) & 31;
    }
    const simple = SIMPLE_ESCAPES[char];
    if (simple !== undefined && Object.hasOwn(SIMPLE_ESCAPES, char)) {
      this.#at += 1;
      return simple;
    }
    return this.#codePoint();
  }

  #codePoint(): number {
    const value = this.#text.codePointAt(this.#at)!;
    this.#at += value > 0xffff ? 2 : 1;
    return value;
  }

  #expect(char: string): void {
    if (this.#text[this.#at] !== char) throw new Unparsable();
    this.#at += 1;
  }

  #skipSpace(): void {
    while (this.#at < this.#text.length && ' \t\r\n\f\v'.includes(this.#text[this.#at]!)) this.#at += 1;
  }
}

function isDigit(char: string): boolean {
  return char >= '0' && char <= '9';
}
