import { RENDER_KIT } from './prelude-render.js';

/**
 * The JavaScript every design-document context evaluates before any function of the design
 * document: CouchDB's query-server environment (`log`, `isArray`, `toJSON`, `sum`, `emit`,
 * `require` of CommonJS modules stored in the design document, functions called with the design
 * document as `this`; list functions' `start`, `send`, `getRow`, `provides`, `registerType`
 * from prelude-render.ts) and the runner the worker calls, `__divan_run`. It runs inside QuickJS, which
 * has no Node API at all (no `process`, no `require('fs')`, no timers). The intrinsics are frozen
 * after set-up so that a function tampering with `Object.prototype` or `JSON` fails (strict mode) or
 * changes nothing (sloppy mode) instead of corrupting later calls; assigning an own `toString` or
 * `constructor` still works, as the frozen prototype properties are accessors that define the
 * property on the receiver (the "override mistake" repair of hardened JavaScript).
 *
 * Nothing carries from one caller to the next (CouchDB's couchjs keeps globals between calls; Divan
 * does not): the global object's own properties are fixed after set-up and whatever a call adds to
 * it is deleted when the call ends (implicit globals still work within the call); required modules,
 * and functions whose source is more than one function expression (an IIFE's closure could hold
 * state), are built anew for every batch (one request's calls; a module's compiled source is kept,
 * its body runs again); map functions' `require` sees `views.lib` only, as CouchDB's; a plain function expression is
 * compiled once and frozen, as nothing of a call can stay in it. A call that leaves the global object in a state this cannot undo (a
 * non-configurable property, a non-extensible global) makes `__divan_run`'s answer start with `!`:
 * the worker then throws the whole context away.
 *
 * A map function's emits are serialised as they come and bounded per document (`maxEmits` rows,
 * `maxEmitBytes` characters of JSON): past either, `emit` throws `emit_limit` and keeps throwing, so
 * a function that catches the error cannot grow the rows, and the document's map fails. Nouveau
 * index functions (mode `index`) call `index(type, name, value, options)` instead (prelude-index.ts),
 * under the same bounds.
 */
import { RUN_MANY } from './prelude-batch.js';
import { GLOBALS_WATCH } from './prelude-globals.js';
import { INDEX_FUNCTION } from './prelude-index.js';

export const PRELUDE = String.raw`
(function (global) {
  'use strict';
  var render = (${RENDER_KIT})(global.__divan_exchange);
  delete global.__divan_exchange;
  var parse = JSON.parse, stringify = JSON.stringify, isArrayOf = Array.isArray;
  var defineProperty = Object.defineProperty, freeze = Object.freeze, keysOf = Reflect.ownKeys;
  var describe = Object.getOwnPropertyDescriptor, indirectEval = eval, hasOwn = Function.prototype.call.bind(Object.prototype.hasOwnProperty);
  var sourceOf = Function.prototype.call.bind(Function.prototype.toString);
  var getPrototypeOf = Object.getPrototypeOf, setPrototypeOf = Object.setPrototypeOf, isExtensible = Object.isExtensible;
  var logs = [], emitted = null, compiled = {}, lasting = {}, modules = {}, factories = {}, batch = [], shared = [], ddoc = null, requireRoot = null, viewsRoot = null;
  var emitLimits = { rows: 0, chars: 0 }, emittedChars = 0, emitOverflow = null;

  function errorToJson(e) {
    if (e !== null && typeof e === 'object' && 'stack' in e && 'name' in e && 'message' in e) return { error: String(e.name), message: String(e.message) };
    return e;
  }
  function log(message) {
    if (typeof message !== 'string') {
      try { message = stringify(errorToJson(message)); } catch (e) { message = String(message); }
    }
    logs.push(String(message));
  }
  function isArray(value) { return isArrayOf(value); }
  function toJSON(value) { return stringify(value); }
  function sum(values) { var total = 0; for (var i = 0; i < values.length; i++) total += values[i]; return total; }
  /** Keeps one row of a map or index call, within the per-document bounds. */
  function record(row) {
    if (emitOverflow !== null) throw emitOverflow;
    emittedChars += row.length;
    if (emitted.length >= emitLimits.rows || emittedChars > emitLimits.chars) {
      emitOverflow = { error: 'emit_limit', message: (currentMode === 'index' ? 'The index' : 'The map') + ' function emitted more than ' + emitLimits.rows + ' rows or ' + emitLimits.chars +
        ' characters of JSON for one document ([query_server_config] max_emits_per_doc, max_emit_bytes_per_doc).' };
      throw emitOverflow;
    }
    emitted.push(row);
  }
  function emit(key, value) {
    if (emitted === null || currentMode !== 'map') throw new Error('emit() is only available to map functions');
    record(stringify([key, value]));
  }
${INDEX_FUNCTION}
  function resolveModule(names, mod, root) {
    if (names.length === 0) {
      if (typeof mod.current !== 'string') throw ['error', 'invalid_require_path', 'Must require a JavaScript string, not: ' + typeof mod.current];
      return { current: mod.current, parent: mod.parent, id: mod.id, exports: {} };
    }
    var n = names.shift();
    if (n === '..') {
      if (!(mod.parent && mod.parent.parent)) throw ['error', 'invalid_require_path', 'Object has no parent ' + stringify(mod.current)];
      return resolveModule(names, { id: mod.id.slice(0, mod.id.lastIndexOf('/')), parent: mod.parent.parent, current: mod.parent.current });
    }
    if (n === '.') {
      if (!mod.parent) throw ['error', 'invalid_require_path', 'Object has no parent ' + stringify(mod.current)];
      return resolveModule(names, { parent: mod.parent, current: mod.current, id: mod.id });
    }
    if (root) mod = { current: root };
    if (mod.current === null || typeof mod.current !== 'object' || mod.current[n] === undefined) {
      throw ['error', 'invalid_require_path', 'Object has no property "' + n + '". ' + stringify(mod.current)];
    }
    return resolveModule(names, { current: mod.current[n], parent: mod, id: mod.id ? mod.id + '/' + n : n });
  }
  /**
   * A module's source compiled once per instance (one design-document revision) and frozen; its
   * body still runs anew for every request, so what its closure keeps lives for that request only.
   * Ids name the same source whichever root resolved them (views.lib sits at the same path in both).
   */
  function factoryOf(module) {
    if (hasOwn(factories, module.id)) return factories[module.id];
    var factory = indirectEval('(function (module, exports, require) { ' + module.current + '\n })');
    factories[module.id] = deepFreeze(factory);
    return factory;
  }
  function requireFrom(parent) {
    return function require(name) {
      var module = resolveModule(String(name).split('/'), parent ? parent.parent : { current: requireRoot }, requireRoot);
      if (hasOwn(modules, module.id)) return modules[module.id];
      modules[module.id] = {};
      try {
        factoryOf(module).call(global, module, module.exports, requireFrom(module));
      } catch (e) {
        delete modules[module.id];
        throw ['error', 'compilation_error', "Module require('" + name + "') raised error " + String(e)];
      }
      modules[module.id] = module.exports;
      return module.exports;
    };
  }

  function evaluate(source) {
    var trimmed = String(source).replace(/[\s;]+$/, '');
    try { return indirectEval('(' + trimmed + '\n)'); } catch (e) {
      if (!(e instanceof SyntaxError)) throw e;
      return indirectEval(trimmed);
    }
  }
  /**
   * Whether the source is exactly one function expression (nothing around it ran and could have
   * made a closure): frozen, such a function keeps nothing of a call, so it outlives its batch.
   */
  function isPlain(fn, source) {
    return sourceOf(fn) === String(source).replace(/^\s+|[\s;]+$/g, '');
  }
  function compile(path) {
    var key = stringify(path);
    if (hasOwn(lasting, key)) return lasting[key];
    if (hasOwn(compiled, key)) return compiled[key];
    var source = ddoc;
    for (var i = 0; i < path.length; i++) source = source !== null && typeof source === 'object' ? source[path[i]] : undefined;
    if (typeof source !== 'string' || source === '') throw ['error', 'not_found', 'missing function'];
    var fn;
    try { fn = evaluate(source); } catch (e) { throw ['error', 'compilation_error', String(e) + ' (' + source + ')']; }
    if (typeof fn !== 'function') throw ['error', 'compilation_error', 'Expression does not eval to a function. (' + source + ')'];
    if (isPlain(fn, source)) lasting[key] = deepFreeze(fn);
    else compiled[key] = fn;
    return fn;
  }

  function deepFreeze(value) {
    if ((value === null || typeof value !== 'object') && typeof value !== 'function') return value;
    if (Object.isFrozen(value)) return value;
    freeze(value);
    var names = keysOf(value);
    for (var i = 0; i < names.length; i++) {
      var d = describe(value, names[i]);
      if (d && 'value' in d) deepFreeze(d.value);
    }
    return value;
  }
  function hardenPrototype(proto) {
    var names = keysOf(proto);
    for (var i = 0; i < names.length; i++) {
      (function (name) {
        var d = describe(proto, name);
        if (!d || !('value' in d) || !d.writable || !d.configurable) return;
        var value = d.value;
        defineProperty(proto, name, {
          configurable: false, enumerable: d.enumerable,
          get: function () { return value; },
          set: function (v) {
            if (this === proto) throw new TypeError('Cannot assign to read only property ' + String(name));
            defineProperty(this, name, { value: v, writable: true, enumerable: true, configurable: true });
          },
        });
      })(names[i]);
    }
  }
${GLOBALS_WATCH}
  var intrinsics = ['Object', 'Function', 'Array', 'String', 'Number', 'Boolean', 'Symbol', 'Error', 'TypeError',
    'RangeError', 'SyntaxError', 'ReferenceError', 'EvalError', 'URIError', 'InternalError', 'AggregateError',
    'Date', 'RegExp', 'Map', 'Set', 'WeakMap', 'WeakSet', 'Promise', 'ArrayBuffer', 'DataView', 'BigInt',
    'Int8Array', 'Uint8Array', 'Uint8ClampedArray', 'Int16Array', 'Uint16Array', 'Int32Array', 'Uint32Array',
    'Float32Array', 'Float64Array', 'BigInt64Array', 'BigUint64Array', 'Proxy'];
  function lockdown() {
    var typedArray = Object.getPrototypeOf(Int8Array);
    var extra = [typedArray, Object.getPrototypeOf(function* () {}), Object.getPrototypeOf(async function () {}),
      Object.getPrototypeOf([][Symbol.iterator]()), Object.getPrototypeOf(Object.getPrototypeOf([][Symbol.iterator]()))];
    var all = intrinsics.filter(function (name) { return typeof global[name] === 'function'; }).map(function (name) { return global[name]; }).concat(extra);
    for (var i = 0; i < all.length; i++) if (all[i].prototype) hardenPrototype(all[i].prototype);
    for (var j = 0; j < all.length; j++) deepFreeze(all[j]);
    deepFreeze(JSON); deepFreeze(Math); deepFreeze(Reflect);
    if (typeof Atomics === 'object') deepFreeze(Atomics);
  }

  function outcome(ok, value) {
    var taken = logs; logs = [];
    try { return stringify([ok, value === undefined ? null : value, taken]); } catch (e) {
      return stringify([false, { error: 'invalid_result', message: 'The function returned a value that is not JSON: ' + String(e) }, taken]);
    }
  }
  function mapped() {
    if (emitOverflow !== null) throw emitOverflow;
    var taken = logs; logs = [];
    return '[true,[' + emitted.join(',') + '],' + stringify(taken) + ']';
  }
  var NONE_DECLARED = freeze(Object.create(null));
  var globalProto = null, baseKeys = 0, batchKnown = NONE_DECLARED, batchKeys = 0;
  /**
   * Deletes the global object's configurable own properties not in known (all of them when null:
   * the set-up ones are not configurable) and puts its prototype back; answers how many own
   * properties it has then, or -1 when it cannot be restored.
   */
  function clearGlobals(known) {
    if (!isExtensible(global)) return -1;
    if (getPrototypeOf(global) !== globalProto && !Reflect.setPrototypeOf(global, globalProto)) return -1;
    var names = keysOf(global);
    if (names.length === (known === null ? baseKeys : batchKeys)) return names.length;
    for (var i = 0; i < names.length; i++) {
      if (known !== null && known[names[i]] === true) continue;
      var d = describe(global, names[i]);
      if (d && d.configurable) delete global[names[i]];
    }
    return keysOf(global).length;
  }
  var current = null, currentMode = 'call', currentError = null, showCall = false;
  function run(index) {
    emitted = currentMode === 'map' || currentMode === 'index' ? [] : null;
    emittedChars = 0; emitOverflow = null;
    var answer;
    try {
      if (currentError !== null) throw currentError;
      var args = shared.length === 0 ? batch[index] : batch[index].concat(shared);
      if (currentMode === 'map' || currentMode === 'index') { current.call(ddoc, args[0]); answer = mapped(); } else if (currentMode === 'list') answer = outcome(true, render.list(current, ddoc, args));
      else if (showCall) answer = outcome(true, render.show(current, ddoc, args));
      else answer = outcome(true, current.apply(ddoc, args));
    } catch (e) {
      answer = outcome(false, errorToJson(e));
    } finally {
      emitted = null;
      batch[index] = undefined;
    }
    var left = batchKeys === baseKeys && globalsUnchanged() ? baseKeys : clearGlobals(batchKnown);
    return left >= 0 && left <= batchKeys ? answer : '!' + answer;
  }
${RUN_MANY}
  function check(pathJson) {
    try { compile(parse(pathJson)); return null; } catch (e) { return isArrayOf(e) ? String(e[2]) : String(e); } finally { compiled = {}; clearGlobals(null); }
  }
  function load(ddocJson) {
    ddoc = deepFreeze(parse(ddocJson));
    // As CouchDB's map functions: require sees views.lib only (couch_query_servers sends no more).
    var views = ddoc !== null && typeof ddoc === 'object' ? ddoc.views : undefined;
    var lib = views !== null && typeof views === 'object' && views.lib !== undefined ? views.lib : null;
    viewsRoot = deepFreeze({ views: { lib: lib } });
    requireRoot = ddoc;
  }
  function setBatch(json, pathJson, mode, sharedJson, maxRows, maxChars) {
    batch = parse(json);
    shared = deepFreeze(parse(sharedJson));
    currentMode = mode;
    showCall = mode === 'call' && parse(pathJson)[0] === 'shows';
    requireRoot = mode === 'call' ? ddoc : viewsRoot;
    emitLimits = { rows: maxRows, chars: maxChars };
    // A new caller: closures of the previous batch's functions and modules are not reachable from here.
    compiled = {}; modules = {};
    if (clearGlobals(null) !== baseKeys) return false;
    var pathKey = stringify(parse(pathJson));
    batchKnown = NONE_DECLARED;
    batchKeys = baseKeys;
    if (hasOwn(lasting, pathKey)) { current = lasting[pathKey]; currentError = null; return true; }
    try { current = compile(parse(pathJson)); currentError = null; } catch (e) { current = null; currentError = e; }
    // What compiling declared (a source of statements may declare helpers) stays for this batch's
    // calls; it is all configurable, the set-up properties are not.
    var names = keysOf(global);
    batchKeys = names.length;
    if (batchKeys === baseKeys) return true;
    batchKnown = Object.create(null);
    for (var i = 0; i < names.length; i++) if (describe(global, names[i]).configurable) batchKnown[names[i]] = true;
    return true;
  }

  var env = { log: log, isArray: isArray, toJSON: toJSON, sum: sum, emit: emit, index: index, require: requireFrom(undefined),
    start: render.start, send: render.send, getRow: render.getRow, provides: render.provides, registerType: render.registerType,
    __divan_load: load, __divan_batch: setBatch, __divan_run: run, __divan_run_many: runMany, __divan_taken: taken, __divan_check: check };
  lockdown();
  var names = Object.keys(env); for (var k = 0; k < names.length; k++) defineProperty(global, names[k], { value: deepFreeze(env[names[k]]), writable: false, enumerable: false, configurable: false });
  var own = keysOf(global);
  for (var g = 0; g < own.length; g++) {
    var d = describe(global, own[g]);
    if ('value' in d) defineProperty(global, own[g], { writable: false, configurable: false });
    else defineProperty(global, own[g], { configurable: false });
  }
  globalProto = getPrototypeOf(global);
  baseKeys = batchKeys = own.length; noteGlobals();
})(globalThis);
`;
