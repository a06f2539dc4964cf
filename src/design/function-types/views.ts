import { isObject, type DesignFunctionType, type NamedFunction } from './function-type.js';

/**
 * `views.{name}.map` and `views.{name}.reduce` (a built-in reduce such as `_sum` is not
 * JavaScript); they run in src/views, where a failing map emits nothing for its document.
 */
export const views = {
  member: 'views',
  functionsIn: (ddoc) => {
    const found: NamedFunction[] = [];
    const all = ddoc['views'];
    if (!isObject(all)) return found;
    for (const [name, view] of Object.entries(all)) {
      if (!isObject(view)) continue;
      if (typeof view['map'] === 'string') found.push({ path: ['views', name, 'map'], prefix: `Compilation of the map function in the '${name}' view failed: ` });
      const reduce = view['reduce'];
      if (typeof reduce === 'string' && !reduce.startsWith('_')) found.push({ path: ['views', name, 'reduce'], prefix: `Compilation of the reduce function in the '${name}' view failed: ` });
    }
    return found;
  },
} satisfies DesignFunctionType;
