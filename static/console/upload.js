// One attachment upload with progress: XMLHttpRequest, as fetch reports no upload progress.
import { UNAUTHORIZED_EVENT } from './api.js';

/**
 * PUTs `file` as the body of `path` with its type (or `application/octet-stream`).
 *
 * @param {string} path
 * @param {Blob} file
 * @param {(loaded: number, total: number) => void} onProgress
 * @returns {Promise<import('./api.js').Answer>}
 */
export function uploadFile(path, file, onProgress) {
  return new Promise((resolve) => {
    const request = new XMLHttpRequest();
    request.open('PUT', path);
    request.setRequestHeader('Accept', 'application/json');
    request.setRequestHeader('X-CouchDB-WWW-Authenticate', 'Cookie');
    request.setRequestHeader('Content-Type', file.type === '' ? 'application/octet-stream' : file.type);
    request.upload.addEventListener('progress', (event) => onProgress(event.loaded, event.lengthComputable ? event.total : file.size));
    request.addEventListener('load', () => {
      if (request.status === 401) window.dispatchEvent(new Event(UNAUTHORIZED_EVENT));
      let body;
      try {
        body = JSON.parse(request.responseText);
      } catch {
        body = undefined;
      }
      if (request.status >= 200 && request.status < 300) onProgress(file.size, file.size);
      resolve({ status: request.status, ok: request.status >= 200 && request.status < 300, body });
    });
    request.addEventListener('error', () => resolve({ status: 0, ok: false, body: undefined }));
    request.send(file);
  });
}
