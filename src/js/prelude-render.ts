/**
 * CouchDB's render environment of list functions (share/server/render.js and mimeparse.js), as a
 * function expression the prelude (prelude.ts) calls once with the host's exchange function:
 * `start`, `send`, `getRow`, `provides`, `registerType`, `list` (render.js runList) and `show` (runShow).
 *
 * The rows come a batch at a time: `getRow` reads from the batch it holds and, once that is used
 * up, sends the output gathered so far (`["start", chunks, head]` the first time, then
 * `["chunks", chunks]`, with the latest `start()` response when one was given since) and gets the
 * next batch in answer (`[]` once the rows are over, `"abort"` when the client went away). So the
 * output leaves per batch of rows, where CouchDB sends it per row; what the client receives is
 * the same. The value of `list` is the last message, `["end", chunks(, start)]`. Every list call
 * starts with CouchDB's default types only: a `registerType` of one caller is not seen by the next.
 * Mime matching keeps mimeparse.js's quirks (its `sort()` compares the entries as text).
 */
export const RENDER_KIT = String.raw`
(function (exchange) {
  'use strict';
  var stringify = JSON.stringify, parse = JSON.parse;
  var mimesByKey, keysByMime, mimeFuns, providesUsed, responseContentType;
  var chunks, startResp, newHeader, gotRow, lastRow, rows, rowAt;

  function registerType(key) {
    var mimes = [];
    for (var i = 1; i < arguments.length; i++) mimes.push(arguments[i]);
    mimesByKey[key] = mimes;
    for (var j = 0; j < mimes.length; j++) keysByMime[mimes[j]] = key;
  }
  function resetMime() {
    mimesByKey = {}; keysByMime = {}; mimeFuns = []; providesUsed = false; responseContentType = null;
    registerType('all', '*/*'); registerType('text', 'text/plain; charset=utf-8', 'txt');
    registerType('html', 'text/html; charset=utf-8'); registerType('xhtml', 'application/xhtml+xml', 'xhtml');
    registerType('xml', 'application/xml', 'text/xml', 'application/x-xml');
    registerType('js', 'text/javascript', 'application/javascript', 'application/x-javascript');
    registerType('css', 'text/css'); registerType('ics', 'text/calendar'); registerType('csv', 'text/csv');
    registerType('rss', 'application/rss+xml'); registerType('atom', 'application/atom+xml');
    registerType('yaml', 'application/x-yaml', 'text/yaml'); registerType('multipart_form', 'multipart/form-data');
    registerType('url_encoded_form', 'application/x-www-form-urlencoded'); registerType('json', 'application/json', 'text/x-json');
  }
  function provides(type, fun) { providesUsed = true; mimeFuns.push([type, fun]); }

  function strip(text) { return text.replace(/^\s+/, '').replace(/\s+$/, ''); }
  function parseMimeType(mimeType) {
    var params = {}, parts = mimeType.split(';');
    for (var i = 0; i < parts.length; i++) {
      var p = parts[i].split('=');
      if (p.length == 2) params[strip(p[0])] = strip(p[1]);
    }
    var fullType = strip(parts[0]);
    if (fullType == '*') fullType = '*/*';
    var typeParts = fullType.split('/');
    return [typeParts[0], typeParts[1], params];
  }
  function parseMediaRange(range) {
    var parsed = parseMimeType(range), q = parseFloat(parsed[2].q);
    if (!parsed[2].q || isNaN(q) || q > 1 || q < 0) parsed[2].q = '1';
    return parsed;
  }
  function fitnessAndQuality(mimeType, ranges) {
    var bestFitness = -1, bestQ = 0, target = parseMediaRange(mimeType);
    for (var i = 0; i < ranges.length; i++) {
      var type = ranges[i][0], subtype = ranges[i][1], params = ranges[i][2];
      if ((type == target[0] || type == '*' || target[0] == '*') && (subtype == target[1] || subtype == '*' || target[1] == '*')) {
        var fitness = (type == target[0] ? 100 : 0) + (subtype == target[1] ? 10 : 0);
        for (var param in target[2]) if (param != 'q' && params[param] && params[param] == target[2][param]) fitness += 1;
        if (fitness > bestFitness) { bestFitness = fitness; bestQ = params.q; }
      }
    }
    return [bestFitness, parseFloat(bestQ)];
  }
  function bestMatch(supported, header) {
    var ranges = header.split(',').map(parseMediaRange), weighted = [];
    for (var i = 0; i < supported.length; i++) weighted.push([fitnessAndQuality(supported[i], ranges), i, supported[i]]);
    weighted.sort();
    return weighted[weighted.length - 1][0][1] ? weighted[weighted.length - 1][2] : '';
  }
  function runProvides(req, ddoc) {
    var supported = [], bestFun, bestKey = null, accept = req.headers['Accept'];
    if (req.query && req.query.format) {
      bestKey = req.query.format;
      responseContentType = mimesByKey[bestKey][0];
    } else if (accept) {
      mimeFuns.reverse().forEach(function (mimeFun) { if (mimesByKey[mimeFun[0]]) supported = supported.concat(mimesByKey[mimeFun[0]]); });
      responseContentType = bestMatch(supported, accept);
      bestKey = keysByMime[responseContentType];
    } else {
      bestKey = mimeFuns[0][0];
      responseContentType = mimesByKey[bestKey][0];
    }
    for (var i = 0; bestKey && i < mimeFuns.length; i++) if (mimeFuns[i][0] == bestKey) { bestFun = mimeFuns[i][1]; break; }
    if (bestFun) return bestFun.call(ddoc);
    var types = mimeFuns.map(function (mf) { return mimesByKey[mf[0]].join(', ') || mf[0]; });
    throw ['error', 'not_acceptable', 'Content-Type ' + (accept || bestKey) + ' not supported, try one of: ' + types.join(', ')];
  }

  function start(resp) { startResp = resp || {}; newHeader = true; }
  function send(chunk) { chunks.push(chunk.toString()); }
  function withContentType(resp) {
    resp.headers = resp.headers || {};
    if (responseContentType) resp.headers['Content-Type'] = resp.headers['Content-Type'] || responseContentType;
    return resp;
  }
  function flush(label) {
    var message = newHeader ? [label, chunks, startResp] : [label, chunks];
    chunks = []; newHeader = false;
    return message;
  }
  function nextRows(message) {
    var answer = parse(exchange(stringify(message)));
    if (answer === 'abort') throw ['fatal', 'list_error', 'The request ended before the list function.'];
    rows = answer; rowAt = 0;
    if (rows.length === 0) lastRow = true;
  }
  function getRow() {
    if (lastRow) return null;
    if (!gotRow) {
      gotRow = true;
      var first = ['start', chunks, withContentType(startResp || {})];
      chunks = []; startResp = {}; newHeader = false;
      nextRows(first);
    } else if (rowAt >= rows.length) nextRows(flush('chunks'));
    return lastRow ? null : rows[rowAt++];
  }
  function list(fun, ddoc, args) {
    resetMime();
    chunks = []; startResp = {}; newHeader = false; gotRow = false; lastRow = false; rows = []; rowAt = 0;
    var tail = fun.apply(ddoc, args);
    if (providesUsed) tail = runProvides(args[1], ddoc);
    if (!gotRow) getRow();
    if (typeof tail != 'undefined') chunks.push(tail);
    return flush('end');
  }
  function wrap(resp) { return typeof resp == 'string' ? { body: resp } : resp; }
  // render.js runShow: start()/send() output goes before the body, a provides() answer after it.
  function show(fun, ddoc, args) {
    resetMime();
    chunks = []; startResp = {}; newHeader = false;
    var resp = wrap(fun.apply(ddoc, args) || {});
    if (chunks.length > 0) {
      resp.headers = resp.headers || {};
      for (var header in startResp) resp.headers[header] = startResp[header];
      resp.body = chunks.join('') + (resp.body || '');
      chunks = []; startResp = {};
    }
    if (providesUsed) {
      var provided = wrap(runProvides(args[1], ddoc) || {});
      resp.body = (resp.body || '') + chunks.join('');
      resp.body += provided.body || '';
      resp = withContentType(resp);
      chunks = []; startResp = {};
    }
    return resp;
  }
  resetMime();
  return { start: start, send: send, getRow: getRow, provides: provides, registerType: registerType, list: list, show: show };
})
`;
