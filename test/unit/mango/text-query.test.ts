/**
 * Selectors as the Lucene queries of nouveau Mango indexes, and the fields an index needs for them,
 * checked against the expectations of CouchDB 3.5.0's `mango_selector_text` and
 * `mango_idx_nouveau` unit tests (with Divan's documented differences: `\-` before a negative
 * number, `*` as a string range's open end).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { normalForm } from '../../../src/mango/normal-form.js';
import { escapeFieldName, textIndexableFields, textQuery } from '../../../src/mango/text-query.js';

const query = (selector: object): string => textQuery(normalForm(selector as never));
const fields = (selector: object): string[] => textIndexableFields(normalForm(selector as never)).sort();

describe('text queries of selectors (mango_selector_text)', () => {
  const cases: [string, object, string][] = [
    ['a string is a phrase on the typed field', { field: 'value' }, '(field_3astring:"value")'],
    ['a number and a boolean are terms', { $and: [{ n: 42 }, { b: true }] }, '((n_3anumber:42) AND (b_3aboolean:true))'],
    ['null searches the null field', { field: null }, '(field_3anull:true)'],
    ['nested objects are dotted paths', { field1: { field2: 'value' } }, '(field1.field2_3astring:"value")'],
    ['$text is a phrase on $default', { $text: 'hello world' }, '($default:"hello\\ world")'],
    ['$lt of a number is an open range', { field: { $lt: 42 } }, '(field_3anumber:[* TO 42})'],
    ['$gt of a string runs to the open end', { field: { $gt: 'm' } }, '(field_3astring:{"m" TO *])'],
    ['a negative number is escaped', { field: { $gte: -5 } }, '(field_3anumber:[\\-5 TO *])'],
    ['a float is written as Erlang writes it', { field: 1.5 }, '(field_3anumber:1.50000000000000000000e+00)'],
    ['$lt of an array only asks that the field exists', { field: { $lt: [1] } }, '(($fieldnames:field_3a*) OR ($fieldnames:field.*))'],
    ['$ne is existence without the value', { field: { $ne: 42 } }, '((($fieldnames:field_3a*) OR ($fieldnames:field.*)) AND NOT ((field_3anumber:42)))'],
    ['$exists false excludes the field names', { field: { $exists: false } }, '($fieldnames:/.*/  AND NOT ((($fieldnames:field_3a*) OR ($fieldnames:field.*))))'],
    ['$in searches the field and its elements', { field: { $in: ['a'] } }, '(((field_3astring:"a") OR (field._5b_5d_3astring:"a")))'],
    ['$size searches the array length', { field: { $size: 6 } }, '(field._5b_5d_3alength:6)'],
    ['$regex asks for a string field', { field: { $regex: '^a' } }, '($fieldnames:field_3astring)'],
    ['$mod asks for a number field', { field: { $mod: [2, 0] } }, '($fieldnames:field_3anumber)'],
    ['$beginsWith is a prefix', { field: { $beginsWith: 'fo o' } }, '(field_3astring:fo\\ o*)'],
    ['an empty $or asks nothing', { field: { $in: [] } }, ''],
    ['an array position also searches any element', { 'a.1': 'x' }, '((a.1_3astring:"x") OR (a._5b_5d_3astring:"x"))'],
    ['$nor is an $and of negations', { $nor: [{ f: 'v' }] }, '(((($fieldnames:f_3a*) OR ($fieldnames:f.*)) AND NOT ((f_3astring:"v"))))'],
  ];
  for (const [name, selector, expected] of cases) {
    test(name, () => assert.equal(query(selector), expected));
  }

  test('field names are escaped byte by byte, dots split parts', () => {
    assert.equal(escapeFieldName('first_name:string'), 'first_5fname_3astring');
    assert.equal(escapeFieldName('a\\.b:string'), 'a_2eb_3astring');
    assert.equal(escapeFieldName('café:string'), 'caf_c3_a9_3astring');
  });

  test('$keyMapMatch cannot be searched: 400 invalid_operator', () => {
    assert.throws(() => query({ field: { $keyMapMatch: { key: 'value' } } }), (error: { status: number; error: string; reason: string }) => error.status === 400 && error.reason === 'Invalid text operator: $keyMapMatch');
  });

  test('$text below a field is 400 bad_field; $not of $text is 400 bad_arg', () => {
    assert.throws(() => query({ a: { $text: 'x' } }), (error: { error: string }) => error.error === 'bad_field');
    assert.throws(() => query({ $not: { $text: 'x' } }), (error: { error: string }) => error.error === 'bad_arg');
  });
});

describe('fields an index needs (mango_idx_nouveau:indexable_fields)', () => {
  test('typed names, $default for $text, none for existence, array element variants dropped', () => {
    assert.deepEqual(fields({ $text: 'x', age: { $gt: 3 }, name: 'n' }), ['$default', 'age:number', 'name:string']);
    assert.deepEqual(fields({ age: { $exists: true } }), []);
    assert.deepEqual(fields({ tags: { $in: ['a'] } }), ['tags:string']);
    assert.deepEqual(fields({ field: { $regex: 'x' } }), ['field:string']);
    assert.deepEqual(fields({ a: 1, b: { $exists: false } }), []);
  });
});
