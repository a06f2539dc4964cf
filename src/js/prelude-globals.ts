/**
 * A cheap test, after each call, that the call added nothing to the global object, so that the full
 * scan of its keys (`clearGlobals` in prelude.ts, several µs per call) runs only when something may
 * have changed. A call adds a global by assignment (an implicit global, `globalThis.x = …`, an
 * indirect `eval`'s `var` or function): such properties are enumerable, so the count of enumerable
 * string keys and of symbol keys grows; or by `Object.defineProperty`, `Object.defineProperties`
 * or `Reflect.defineProperty` (possibly through a proxy of the global object), which are wrapped
 * here to note any call at all. The set-up properties cannot be deleted (not configurable), so no
 * key can vanish to hide an added one; while a batch keeps helpers that compiling declared (which
 * are configurable), the full scan runs after every call. Spliced into PRELUDE before `lockdown`,
 * whose closure gives it `global`, `isExtensible`, `getPrototypeOf` and `globalProto`.
 */
export const GLOBALS_WATCH = String.raw`
  var definedSince = false, enumerableKeys = 0, symbolKeys = 0, countKeys = Object.keys, countSymbols = Object.getOwnPropertySymbols;
  (function watchDefinitions() {
    var defineOne = Object.defineProperty, defineMany = Object.defineProperties, reflectDefine = Reflect.defineProperty;
    Object.defineProperty = function (o, key, descriptor) { definedSince = true; return defineOne(o, key, descriptor); };
    Object.defineProperties = function (o, descriptors) { definedSince = true; return defineMany(o, descriptors); };
    Reflect.defineProperty = function (o, key, descriptor) { definedSince = true; return reflectDefine(o, key, descriptor); };
  })();
  /** Remembers the set-up global object's counts (once, after set-up). */
  function noteGlobals() { enumerableKeys = countKeys(global).length; symbolKeys = countSymbols(global).length; definedSince = false; }
  /** True when no call since the last check can have added a property to the global object. */
  function globalsUnchanged() {
    var unchanged = !definedSince && countKeys(global).length === enumerableKeys && countSymbols(global).length === symbolKeys;
    definedSince = false;
    return unchanged && isExtensible(global) && getPrototypeOf(global) === globalProto;
  }
`;
