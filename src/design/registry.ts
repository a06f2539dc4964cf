import { filters } from './function-types/filters.js';
import { lists } from './function-types/lists.js';
import { nouveau } from './function-types/nouveau.js';
import { shows } from './function-types/shows.js';
import { updates } from './function-types/updates.js';
import type { DesignFunctionType } from './function-types/function-type.js';
import { validateDocUpdate } from './function-types/validate-doc-update.js';
import { views } from './function-types/views.js';

export { isNouveauAnalyzer } from './function-types/nouveau.js';

/**
 * Every type of design-document function Divan runs, in the order the design check on save
 * reports them. A new type is one file in `function-types/` and its line here (docs/architecture.md).
 */
export const DESIGN_FUNCTION_TYPES: readonly DesignFunctionType[] = [validateDocUpdate, filters, views, shows, lists, updates, nouveau];
