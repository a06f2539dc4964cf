import assert from 'node:assert/strict';
import { test } from 'node:test';
import { collatorVersion } from '../../../src/collation/collator-version.js';

test('the collator version as ICU writes it: CouchDB 3.5 on ICU 70 (UCA 14.0), PostgreSQL on ICU 72 (UCA 15.0)', () => {
  assert.equal(collatorVersion('14.0'), '153.112');
  assert.equal(collatorVersion('15.0'), '153.120');
  assert.equal(collatorVersion('15.1'), '153.121');
  assert.equal(collatorVersion(''), undefined);
  assert.match(collatorVersion()!, /^153\.\d+$/, 'Node always has an ICU with a Unicode version');
});
