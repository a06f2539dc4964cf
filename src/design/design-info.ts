import { createHash } from 'node:crypto';
import { collatorVersion } from '../collation/collator-version.js';
import type { JsonObject } from '../json/json.js';

/** What the view index of a design document reports (the views' builder fills it in). */
export interface ViewIndexFigures {
  readonly updateSeq: number;
  readonly purgeSeq: number;
  readonly sizes: { readonly file: number; readonly external: number; readonly active: number };
  readonly updaterRunning: boolean;
  readonly compactRunning: boolean;
  readonly waitingClients: number;
  readonly updatesPending: { readonly minimum: number; readonly preferred: number; readonly total: number };
}

/** An index that was never built: nothing indexed, nothing running. */
export const NO_INDEX: ViewIndexFigures = {
  updateSeq: 0,
  purgeSeq: 0,
  sizes: { file: 0, external: 0, active: 0 },
  updaterRunning: false,
  compactRunning: false,
  waitingClients: 0,
  updatesPending: { minimum: 0, preferred: 0, total: 0 },
};

/**
 * The signature of a design document's view index: a digest of what the index depends on (the
 * views, their language, options and the `views.lib` modules), so an edit elsewhere in the design
 * document keeps it, as in CouchDB.
 */
function viewSignature(ddoc: JsonObject): string {
  const relevant = { language: ddoc['language'] ?? 'javascript', views: ddoc['views'] ?? {}, options: ddoc['options'] ?? {} };
  return createHash('md5').update(JSON.stringify(relevant)).digest('hex');
}

/** `GET /{db}/_design/{name}/_info`, in CouchDB's shape. */
export function designInfoBody(name: string, ddoc: JsonObject, index: ViewIndexFigures = NO_INDEX): JsonObject {
  const language = typeof ddoc['language'] === 'string' ? ddoc['language'] : 'javascript';
  // Every index keys its ICU-collated views with the weights of the running ICU (src/collation/weights.ts).
  const collator = collatorVersion();
  return {
    name,
    view_index: {
      updates_pending: { ...index.updatesPending },
      waiting_commit: false,
      waiting_clients: index.waitingClients,
      updater_running: index.updaterRunning,
      update_seq: index.updateSeq,
      sizes: { ...index.sizes },
      signature: viewSignature(ddoc),
      purge_seq: index.purgeSeq,
      language,
      compact_running: index.compactRunning,
      collator_versions: collator === undefined ? [] : [collator],
    },
  };
}
