import type { Json } from '../../src/json/json.js';

/** CouchDB's collation table (docs ddocs/views/collation, couch_mrview_collation_tests.erl), in order. */
export const COLLATION_TABLE: Json[] = [
  null, false, true,
  -1e300, -2, -1.5, 0, 1, 2, 3.0, 4, 1e300,
  'a', 'A', 'aa', 'b', 'B', 'ba', 'bb',
  ['a'], ['b'], ['b', 'c'], ['b', 'c', 'a'], ['b', 'd'], ['b', 'd', 'e'],
  { a: 1 }, { a: 2 }, { b: 1 }, { b: 2 }, { b: 2, a: 1 }, { b: 2, c: 2 },
];

/**
 * The 7-bit ASCII order of single-character keys. CouchDB's documentation shows "` ^" first, as the
 * ICU of its time did; current ICU (CLDR root, as CouchDB 3.5 links) puts them after "%".
 */
export const ASCII_ORDER = "_ - , ; : ! ? . ' \" ( ) [ ] { } @ * / \\ & # % ` ^ + < = > | ~ $ 0 1 2 3 4 5 6 7 8 9 a A b B c C d D e E f F g G h H i I j J k K l L m M n N o O p P q Q r R s S t T u U v V w W x X y Y z Z".split(' ');

