/**
 * A JSON value already serialised as replies are (compact, newline-terminated): a body that is the
 * same for many requests (a cached document) is kept as its text, not serialised for each one.
 */
export class JsonText {
  readonly text: string;
  /** UTF-8 bytes: the reply's Content-Length. */
  readonly byteLength: number;

  constructor(text: string) {
    this.text = text;
    this.byteLength = Buffer.byteLength(text);
  }

  static of(value: unknown): JsonText {
    return new JsonText(`${JSON.stringify(value)}\n`);
  }
}
