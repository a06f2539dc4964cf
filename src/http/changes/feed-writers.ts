import type { Feed } from '../../changes/feed.js';
import type { FeedWriter } from '../../changes/feeds.js';
import type { Sequences } from '../../databases/sequences.js';

export function writerFor(feed: Exclude<Feed, 'normal'>, sequences: Sequences): FeedWriter {
  switch (feed) {
    case 'continuous':
      return {
        change: (entry) => `${JSON.stringify(entry)}\n`,
        heartbeat: () => '\n',
        waiting: () => '',
        end: (lastSeq, pending) => `${JSON.stringify({ last_seq: sequences.format(lastSeq), pending })}\n`,
      };
    case 'eventsource':
      return {
        change: (entry) => `data: ${JSON.stringify(entry)}\nid: ${JSON.stringify(entry['seq'])}\n\n`,
        heartbeat: () => 'event: heartbeat\ndata: \n\n',
        waiting: () => '',
        end: () => '',
      };
    case 'longpoll': {
      // CouchDB's layout: `{"results":[` + rows joined by `,\r\n` + `],"last_seq":…}`; heartbeats
      // are newlines inside the array, so the whole body stays one JSON value.
      let opened = false;
      let rows = 0;
      const open = (): string => {
        if (opened) return '';
        opened = true;
        return '{"results":[\n';
      };
      return {
        change: (entry) => `${open()}${rows++ > 0 ? ',\r\n' : ''}${JSON.stringify(entry)}`,
        heartbeat: () => `${open()}\n`,
        waiting: () => (opened ? '' : `${open()}\n`),
        end: (lastSeq, pending) => `${open()}\n],\n"last_seq":${JSON.stringify(sequences.format(lastSeq))},"pending":${pending}}\n`,
      };
    }
  }
}