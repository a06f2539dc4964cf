import type { OpenedDatabase } from '../databases/opened-database.js';
import { notFound } from '../errors/catalog.js';
import type { DesignDoc } from '../js/sandbox.js';
import { isObject } from './function-types/function-type.js';

/**
 * The design document `_design/{ddocName}` holding `{member}.{name}`, with CouchDB's answers when
 * it does not (couch_changes:configure_filter, couch_mrview): a missing design document is 404
 * `missing`/`deleted`, a missing member 404 `missing json key: …`.
 */
export async function designDocHolding(opened: OpenedDatabase, ddocName: string, member: string, name: string): Promise<DesignDoc> {
  const { doc } = await opened.readDocument(`_design/${ddocName}`, undefined, {});
  const functions = doc[member];
  if (functions === undefined) throw notFound(`missing json key: ${member}`);
  if (!isObject(functions)) throw notFound('json_mismatch');
  if (!Object.hasOwn(functions, name)) throw notFound(`missing json key: ${name}`);
  return doc as DesignDoc;
}
