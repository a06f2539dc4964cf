// One show or update function of a design document: its source, and a form that runs it and shows
// the answer (status, content type, body). The body is the function's output and untrusted: it is
// shown as text, and an HTML body also in a sandboxed frame (no scripts, an opaque origin), never
// as part of the console's page.
import { api, dbPath, failure, raw } from './api.js';
import { answerBody, answerSummary, BODY_TYPES, isHtml, showRequest, updateRequest } from './design-call.js';
import { field, form, h, invalid, messages } from './dom.js';
import { parseJson } from './format.js';

/**
 * The link of a function's page.
 *
 * @param {string} db
 * @param {string} ddoc the design document's name without `_design/`
 * @param {'show' | 'update'} kind
 * @param {string} name
 */
export function functionHash(db, ddoc, kind, name) {
  return `#/db/${encodeURIComponent(db)}/design/${encodeURIComponent(ddoc)}/${kind}/${encodeURIComponent(name)}`;
}

/**
 * @typedef {{ db: string, ddoc: string, name: string, kind: 'show' | 'update' }} Target
 */

/** @param {import('./app.js').Context} context */
export async function render(context) {
  const [, db = '', , ddoc = '', kindSegment = '', name = ''] = context.segments;
  const kind = kindSegment === 'update' ? 'update' : 'show';
  const id = `_design/${ddoc}`;
  context.view.append(h('p', { className: 'crumbs' }, h('a', { href: `#/db/${encodeURIComponent(db)}/views` }, `← Design documents of ${db}`)));
  if (kindSegment !== 'show' && kindSegment !== 'update') {
    context.title(`${ddoc}: no such function page`);
    context.view.append(h('p', { className: 'notice', id: 'function-unavailable' }, 'The console runs show and update functions: this address names neither.'));
    return;
  }
  context.title(`${kind === 'show' ? 'Show' : 'Update'} ${ddoc}/${name}`);
  const loaded = await api('GET', dbPath(db, id));
  const source = loaded.ok ? loaded.body?.[`${kind}s`]?.[name] : undefined;
  if (typeof source !== 'string') {
    const why = loaded.ok ? `${id} has no ${kind} function named ${name}.` : failure(`Could not open ${id}`, loaded);
    context.view.append(h('p', { className: 'notice', id: 'function-unavailable' }, why));
    return;
  }
  const target = { db, ddoc, name, kind };
  const answer = h('section', { id: 'function-answer', 'aria-labelledby': 'function-answer-heading', 'aria-live': 'polite', hidden: true });
  context.view.append(
    h('section', { 'aria-labelledby': 'function-source-heading' }, h('h2', { id: 'function-source-heading' }, 'Function'), h('pre', { className: 'code wrap', id: 'function-source' }, source)),
    kind === 'show' ? showForm(target, answer) : updateForm(target, answer),
    answer,
  );
}

/**
 * @param {Target} target
 * @param {HTMLElement} answer
 */
function showForm(target, answer) {
  const id = field('Document id', { id: 'function-doc-id', autocapitalize: 'none', spellcheck: 'false' }, 'Optional: the document the function gets; without one it gets null.');
  const children = [h('h2', null, 'Run'), id.wrapper, h('button', { type: 'submit', id: 'run-function' }, 'Run the show')];
  return form({ id: 'function-form', 'aria-label': `Run the show ${target.name}` }, children, () => run(showRequest(target, id.control.value), answer, id.control));
}

/**
 * @param {Target} target
 * @param {HTMLElement} answer
 */
function updateForm(target, answer) {
  const id = field('Document id', { id: 'function-doc-id', autocapitalize: 'none', spellcheck: 'false' }, 'Optional: with an id the update is a PUT and gets the stored document (or null); without one it is a POST and gets null.');
  const type = field('Body type', { id: 'function-body-type', tag: 'select' });
  type.control.append(h('option', { value: 'form' }, `Form (${BODY_TYPES.form})`), h('option', { value: 'json' }, `JSON (${BODY_TYPES.json})`));
  const body = field('Request body', { id: 'function-body', tag: 'textarea', rows: 4, spellcheck: 'false', autocapitalize: 'none', className: 'code' }, 'Optional: form text like title=Hello&tags=a, or JSON. The function reads it as req.body (and a form as req.form).');
  const method = h('p', { id: 'function-method', className: 'help' });
  const input = () => ({ id: id.control.value, type: type.control.value, body: body.control.value });
  const describe = () => {
    const request = updateRequest(target, { ...input(), body: '' });
    method.textContent = request.ok ? `Sent as ${request.method} ${request.path}` : '';
  };
  id.control.addEventListener('input', describe);
  describe();
  const children = [h('h2', null, 'Run'), id.wrapper, h('div', { className: 'field-row' }, type.wrapper), body.wrapper, method, h('button', { type: 'submit', id: 'run-function' }, 'Run the update')];
  return form({ id: 'function-form', 'aria-label': `Run the update ${target.name}` }, children, () => {
    const request = updateRequest(target, input());
    return run(request, answer, request.ok ? id.control : request.field === 'body' ? body.control : type.control);
  });
}

/**
 * Sends the request and shows the answer, whatever its status: a function's error is an answer too.
 *
 * @param {import('./design-call.js').CallRequest} request
 * @param {HTMLElement} answer
 * @param {HTMLElement} control the field to blame when the request cannot be made
 */
async function run(request, answer, control) {
  if (!request.ok) return invalid(control, request.error);
  const result = await raw(request.method, request.path, request.body);
  if (result.status === 0) {
    messages.error(failure(`${request.method} ${request.path}`, { ...result, body: undefined }));
    return;
  }
  showAnswer(answer, result);
  // A 401 may be the end of the session: said as every page says it, with the way to sign in.
  if (result.status === 401) messages.error(failure(`${request.method} ${request.path}`, { ...result, body: jsonOf(result) }));
  else if (result.ok) messages.status(answerSummary(request, result.status, undefined));
  else messages.error(answerSummary(request, result.status, jsonOf(result)));
}

/**
 * @param {HTMLElement} answer
 * @param {import('./api.js').RawAnswer} result
 */
function showAnswer(answer, result) {
  const contentType = result.headers['content-type'];
  const body = answerBody(contentType, result.bytes);
  const facts = [['Status', String(result.status)], ['Content type', contentType ?? '(none)']];
  const newRev = result.headers['x-couch-update-newrev'];
  const docId = result.headers['x-couch-id'];
  if (docId !== undefined) facts.push(['Document', safeDecode(docId)]);
  if (newRev !== undefined) facts.push(['New revision', newRev]);
  answer.replaceChildren(
    h('h2', { id: 'function-answer-heading' }, 'Answer'),
    h('dl', { className: 'facts', id: 'function-answer-facts' }, ...facts.map(([term, value]) => h('div', null, h('dt', null, term), h('dd', null, value)))),
    h('h3', null, 'Body'),
    'text' in body ? h('pre', { className: 'code wrap', id: 'function-answer-body' }, body.text) : h('p', { className: 'muted', id: 'function-answer-body' }, body.binary),
  );
  if ('text' in body && isHtml(contentType)) answer.append(h('h3', null, 'As a page (sandboxed: no script runs)'), preview(body.text));
  answer.hidden = false;
}

/**
 * An HTML body in a frame of its own: `sandbox` with no permission gives it an opaque origin and
 * runs none of its scripts or handlers; it cannot reach the console or its cookie. The frame
 * inherits the console's policy, which lets it load the server's own files as the signed-in
 * user; its own policy (`csp`) refuses every load, so the body cannot make the browser send any
 * request at all.
 *
 * @param {string} html
 */
function preview(html) {
  const frame = /** @type {HTMLIFrameElement} */ (h('iframe', { id: 'function-answer-preview', className: 'preview', title: 'The answer as a page, sandboxed', sandbox: true, csp: "default-src 'none'", referrerpolicy: 'no-referrer' }));
  frame.srcdoc = html;
  return frame;
}

/**
 * A JSON answer's object (a CouchDB error), for the error message; undefined otherwise.
 *
 * @param {import('./api.js').RawAnswer} result
 */
function jsonOf(result) {
  if (!/json/i.test(result.headers['content-type'] ?? '')) return undefined;
  const body = answerBody(result.headers['content-type'], result.bytes);
  return 'text' in body ? parseJson(body.text).value : undefined;
}

/** @param {string} text */
function safeDecode(text) {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
