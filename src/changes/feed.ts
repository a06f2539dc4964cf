import type { OpenedDatabase } from '../databases/opened-database.js';
import type { Sequences } from '../databases/sequences.js';
import type { Selector } from '../documents/selector.js';
import type { FilterFunction } from '../design/filter-function.js';
import type { JsonObject } from '../json/json.js';

/** The kinds of `_changes` feed. */
export type Feed = 'normal' | 'longpoll' | 'continuous' | 'eventsource';

export type Filter =
  | { kind: 'none' }
  | { kind: 'doc_ids'; ids: string[] }
  | { kind: 'design' }
  | { kind: 'selector'; selector: Selector }
  /** `_view`: the documents the view's map function emits anything for. */
  | { kind: 'view'; matches: (docs: JsonObject[]) => Promise<boolean[]> }
  /** `filter=ddoc/name`: the design document's JavaScript function, called with each document and `req`. */
  | ({ kind: 'function' } & FilterFunction);

/** Whether the filter looks at document bodies (then they are read with the changes). */
export const filterReadsDocs = (filter: Filter): boolean => filter.kind === 'selector' || filter.kind === 'view' || filter.kind === 'function';

/** What a `_changes` request asks for: parsed once (by the HTTP layer), before the feed starts. */
export interface FeedArgs {
  /** The database, opened for the caller: `include_docs` bodies and `_selector` matching go through its view. */
  opened: OpenedDatabase;
  feed: Feed;
  allLeaves: boolean;
  includeDocs: boolean;
  /** With `include_docs`: the attachments' data inline (`attachments=true`). */
  attachments: boolean;
  /** With `include_docs`: stubs keep `encoding` and `encoded_length` (`att_encoding_info=true`). */
  attEncodingInfo?: boolean;
  conflicts: boolean;
  descending: boolean;
  limit?: number;
  since: number;
  /** How this database's sequences go out (`seq`, `last_seq`) and come in (`since`). */
  sequences: Sequences;
  filter: Filter;
  /** Milliseconds between heartbeats; undefined: none. */
  heartbeatMs?: number;
  /** End after this long without a change (no heartbeat only); undefined: never. */
  idleMs?: number;
  /** Epoch milliseconds at which the feed ends whatever happens. */
  deadline: number;
  /** Aborted when the client went away: reading and filtering stop (`clientGone`). */
  signal?: AbortSignal;
}
