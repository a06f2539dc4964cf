/**
 * CouchDB (Erlang `crypto`) hash names accepted in `[chttpd_auth] hash_algorithms`, with the Node
 * digest each one maps to. Names are case-sensitive, as in CouchDB (`SHA256` is not a hash there).
 */
export const COUCH_HASH_ALGORITHMS: ReadonlyMap<string, string> = new Map([
  ['sha', 'sha1'],
  ['sha224', 'sha224'],
  ['sha256', 'sha256'],
  ['sha384', 'sha384'],
  ['sha512', 'sha512'],
  ['sha3_224', 'sha3-224'],
  ['sha3_256', 'sha3-256'],
  ['sha3_384', 'sha3-384'],
  ['sha3_512', 'sha3-512'],
  ['blake2s', 'blake2s256'],
  ['blake2b', 'blake2b512'],
  ['md5', 'md5'],
  ['md4', 'md4'],
  ['ripemd160', 'ripemd160'],
]);
