/**
 * The fields a nouveau Mango index holds for a document (CouchDB's `mango_native_proc`
 * `nouveau_index_doc`): typed, escaped names, `$default` text, `$fieldnames`, array lengths, the
 * field list and the partial filter.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { fieldPlanOf, nouveauFieldsOf } from '../../../src/mango/nouveau-fields.js';

const DOC = { _id: 'd', _rev: '1-a', name: 'Ann Lee', age: 40, ok: true, gone: null, tags: ['x'], 'a.b': 'dot' };

describe('fields of a document under a nouveau Mango index', () => {
  test('every leaf by path and type, strings also as $default text, and every name under $fieldnames', () => {
    const fields = nouveauFieldsOf(fieldPlanOf({ fields: 'all_fields' }), DOC);
    const values = fields.filter((field) => field.name !== '$fieldnames');
    assert.deepEqual(
      values.filter((field) => field.name !== '$default').map((field) => [field.type, field.name, field.value]),
      [
        ['string', '_5fid_3astring', 'd'],
        ['string', '_5frev_3astring', '1-a'],
        ['string', 'name_3astring', 'Ann Lee'],
        ['double', 'age_3anumber', 40],
        ['string', 'ok_3aboolean', 'true'],
        ['string', 'gone_3anull', 'true'],
        ['double', 'tags._5b_5d_3alength', 1],
        ['string', 'tags._5b_5d_3astring', 'x'],
        ['string', 'a_2eb_3astring', 'dot'],
      ],
    );
    assert.deepEqual(values.filter((field) => field.name === '$default').map((field) => [field.type, field.value]).sort(), [['text', '1-a'], ['text', 'Ann Lee'], ['text', 'd'], ['text', 'dot'], ['text', 'x']]);
    const names = fields.filter((field) => field.name === '$fieldnames').map((field) => field.value);
    assert.deepEqual(names, [...new Set(values.map((field) => field.name))].sort());
  });

  test('a field list keeps only its fields (array lengths still counted); default_field false drops $default', () => {
    const plan = fieldPlanOf({ fields: [{ name: 'age', type: 'number' }, { name: 'name', type: 'string' }], default_field: { enabled: false }, index_array_lengths: true });
    const fields = nouveauFieldsOf(plan, DOC).filter((field) => field.name !== '$fieldnames');
    assert.deepEqual(fields.map((field) => field.name), ['name_3astring', 'age_3anumber', 'tags._5b_5d_3alength']);
  });

  test('index_array_lengths false leaves lengths out; a partial filter and design documents leave the document out', () => {
    assert.ok(!nouveauFieldsOf(fieldPlanOf({ fields: 'all_fields', index_array_lengths: false }), DOC).some((field) => field.name.endsWith('_3alength')));
    const partial = fieldPlanOf({ fields: 'all_fields', partial_filter_selector: { age: { $gt: 50 } } });
    assert.deepEqual(nouveauFieldsOf(partial, DOC), []);
    assert.ok(nouveauFieldsOf(partial, { ...DOC, age: 60 }).length > 0);
    assert.deepEqual(nouveauFieldsOf(fieldPlanOf({ fields: 'all_fields' }), { _id: '_design/x', a: 'b' }), []);
  });
});
