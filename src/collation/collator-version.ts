/**
 * The version of ICU's root collator that `weights.ts` reads its weights from (Node's ICU, through
 * `Intl.Collator`), written as ICU's `ucol_getVersion` gives it and CouchDB shows it in `_info`'s
 * `collator_versions` ("153.112" for ICU 70, whose collation algorithm is UCA 14.0): the first
 * number is ICU's collation builder version plus its runtime version shifted (9 + 9 × 16 = 153), the
 * second the UCA version (major × 8 + minor), which is the Unicode version of the ICU in use.
 */
export function collatorVersion(unicodeVersion: string | undefined = process.versions.unicode): string | undefined {
  const match = /^(\d+)\.(\d+)/.exec(unicodeVersion ?? '');
  if (match === null) return undefined;
  return `153.${Number(match[1]) * 8 + Number(match[2])}`;
}
