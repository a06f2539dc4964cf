/**
 * The `index(type, name, value, options)` global of Nouveau index functions, as CouchDB's
 * `share/server/nouveau.js` checks its arguments: `type` and `name` strings, names not starting
 * with `_`, `text` and `string` values strings, `double` values numbers, `stored` values strings or
 * numbers; anything else throws, and the document's index call fails (it is left out of the index).
 * Each call becomes one row `{type, name, value, store, facet}` of the call's answer, counted
 * against the same per-document bounds as `emit` (`record` in prelude.ts). Spliced into PRELUDE,
 * whose closure gives it `record`, `emitted`, `currentMode` and `stringify`.
 */
export const INDEX_FUNCTION = String.raw`
  function indexTypeError(message) { return { name: 'TypeError', message: message }; }
  function index(type, name, value, options) {
    if (emitted === null || currentMode !== 'index') throw new Error('index() is only available to Nouveau index functions');
    if (typeof type !== 'string') throw indexTypeError('type of type must be a string not ' + typeof type);
    if (typeof name !== 'string') throw indexTypeError('type of name must be a string not ' + typeof name);
    if (name.substring(0, 1) === '_') throw { name: 'ReservedName', message: 'name must not start with an underscore' };
    var opts = options !== null && typeof options === 'object' ? options : {};
    if (type === 'double' || type === 'string' || type === 'text') {
      var expected = type === 'double' ? 'number' : 'string';
      if (typeof value !== expected) throw indexTypeError('type of value must be a ' + expected + ' not ' + typeof value);
      if (type === 'double' && !isFinite(value)) throw indexTypeError('value of ' + name + ' must be a finite number');
      record(stringify({ type: type, name: name, value: value, store: opts.store === true, facet: opts.facet === true }));
    } else if (type === 'stored') {
      if (typeof value !== 'number' && typeof value !== 'string') throw indexTypeError('type of ' + value + ' must be a string or number');
      record(stringify({ type: type, name: name, value: value, store: true, facet: false }));
    } else throw indexTypeError(type + ' not supported');
  }
`;
