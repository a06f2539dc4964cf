/**
 * Schema step 8 of the PostgreSQL backend (postgres-schema.ts), the twin of SQLite's step 7: live
 * documents counted per block of ids, so that `_all_docs` finds the offset of a start key by summing
 * the blocks before the key's block and counting inside that one, instead of counting every
 * document before it (CouchDB reads the same counts from its B-tree's inner nodes). Block '' holds
 * the ids below every other block's first id. Statement triggers keep the counts with one
 * aggregated update per write statement; after it, a block of 2048 live documents or more splits
 * at its 1025th.
 */
export const ID_BLOCKS_SQL = `CREATE TABLE id_blocks (
  db_id bigint NOT NULL,
  first_id text COLLATE "C" NOT NULL,
  live bigint NOT NULL,
  PRIMARY KEY (db_id, first_id)
);
CREATE INDEX full_id_blocks ON id_blocks (db_id) WHERE live >= 2048;
INSERT INTO id_blocks (db_id, first_id, live)
  SELECT db_id, CASE WHEN block = 0 THEN '' ELSE min(id) END, count(*)
  FROM (SELECT db_id, id, (row_number() OVER (PARTITION BY db_id ORDER BY id) - 1) / 1024 AS block FROM documents WHERE NOT deleted) AS numbered
  GROUP BY db_id, block;
INSERT INTO id_blocks (db_id, first_id, live) SELECT db_id, '', 0 FROM databases ON CONFLICT DO NOTHING;
CREATE FUNCTION id_blocks_count(changed_db bigint[], changed_id text[], delta int[]) RETURNS void
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
  full_block record;
BEGIN
  UPDATE id_blocks b SET live = b.live + c.delta
  FROM (
    SELECT t.db_id, (SELECT max(x.first_id) FROM id_blocks x WHERE x.db_id = t.db_id AND x.first_id <= t.id COLLATE "C") AS first_id, sum(t.delta) AS delta
    FROM unnest(changed_db, changed_id, delta) AS t(db_id, id, delta) WHERE t.delta <> 0 GROUP BY 1, 2
  ) c
  WHERE b.db_id = c.db_id AND b.first_id = c.first_id;
  LOOP
    SELECT db_id, first_id, live INTO full_block FROM id_blocks WHERE live >= 2048 LIMIT 1;
    EXIT WHEN NOT FOUND;
    INSERT INTO id_blocks (db_id, first_id, live)
      SELECT full_block.db_id, d.id, full_block.live - 1024 FROM documents d
      WHERE d.db_id = full_block.db_id AND NOT d.deleted AND d.id >= full_block.first_id COLLATE "C" ORDER BY d.id LIMIT 1 OFFSET 1024;
    UPDATE id_blocks SET live = 1024 WHERE db_id = full_block.db_id AND first_id = full_block.first_id COLLATE "C";
  END LOOP;
END $$;
CREATE FUNCTION id_blocks_on_insert() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  PERFORM id_blocks_count(array_agg(db_id), array_agg(id), array_agg(CASE WHEN deleted THEN 0 ELSE 1 END)) FROM new_rows;
  RETURN NULL;
END $$;
CREATE FUNCTION id_blocks_on_update() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  PERFORM id_blocks_count(array_agg(n.db_id), array_agg(n.id), array_agg((NOT n.deleted)::int - (NOT o.deleted)::int))
  FROM new_rows n JOIN old_rows o ON o.doc_pk = n.doc_pk;
  RETURN NULL;
END $$;
CREATE FUNCTION id_blocks_on_delete() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  PERFORM id_blocks_count(array_agg(db_id), array_agg(id), array_agg(CASE WHEN deleted THEN 0 ELSE -1 END)) FROM old_rows;
  RETURN NULL;
END $$;
CREATE TRIGGER id_blocks_on_insert AFTER INSERT ON documents REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION id_blocks_on_insert();
CREATE TRIGGER id_blocks_on_update AFTER UPDATE ON documents REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION id_blocks_on_update();
CREATE TRIGGER id_blocks_on_delete AFTER DELETE ON documents REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION id_blocks_on_delete();
CREATE FUNCTION id_blocks_of_new_database() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  INSERT INTO id_blocks (db_id, first_id, live) VALUES (NEW.db_id, '', 0) ON CONFLICT DO NOTHING;
  RETURN NULL;
END $$;
CREATE FUNCTION id_blocks_of_deleted_database() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  DELETE FROM id_blocks WHERE db_id = OLD.db_id;
  RETURN NULL;
END $$;
CREATE TRIGGER id_blocks_of_new_database AFTER INSERT ON databases FOR EACH ROW EXECUTE FUNCTION id_blocks_of_new_database();
CREATE TRIGGER id_blocks_of_deleted_database AFTER DELETE ON databases FOR EACH ROW EXECUTE FUNCTION id_blocks_of_deleted_database();
`;
