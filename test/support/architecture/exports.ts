import type { ModuleFacts } from './modules.js';

/**
 * Exported names that no other file imports. A name counts as used when some file imports it by
 * name, as a default, through a namespace (`ns.name`, or the whole namespace used as a value),
 * through `import()`, or through a chain of `export *` files; a file re-exporting a name by name
 * uses it, and its own re-export must then be used in turn.
 */

const starTargets = (module: ModuleFacts | undefined): string[] => module?.imports.filter((entry) => entry.reExportsAll).map((entry) => entry.target) ?? [];

class Uses {
  readonly #used = new Map<string, Set<string>>();

  constructor(private readonly modules: Map<string, ModuleFacts>) {}

  has(path: string, name: string): boolean {
    return this.#used.get(path)?.has(name) ?? false;
  }

  /** Marks `name` of `path` used, following `export *` when `path` does not declare it itself. */
  mark(path: string, name: string, seen = new Set<string>()): void {
    if (seen.has(path)) return;
    seen.add(path);
    const module = this.modules.get(path);
    if (!module) return;
    if (name === '*') {
      for (const own of module.exports) this.#add(path, own);
      for (const target of starTargets(module)) this.mark(target, '*', seen);
      return;
    }
    if (module.exports.includes(name)) this.#add(path, name);
    else for (const target of starTargets(module)) this.mark(target, name, seen);
  }

  #add(path: string, name: string): void {
    if (!this.#used.has(path)) this.#used.set(path, new Set());
    this.#used.get(path)!.add(name);
  }
}

/**
 * `path: name` for every name exported by a file under `root` that no other file (of all the given
 * modules) imports.
 */
export function unusedExports(modules: Map<string, ModuleFacts>, root = 'src'): string[] {
  const uses = new Uses(modules);
  for (const module of modules.values()) {
    for (const entry of module.imports) {
      if (entry.reExportsAll || entry.target === module.path) continue;
      for (const name of entry.names) uses.mark(entry.target, name);
    }
  }
  return [...modules.values()]
    .filter((module) => module.path.startsWith(`${root}/`))
    .flatMap((module) => [...new Set(module.exports)].filter((name) => !uses.has(module.path, name)).map((name) => `${module.path}: ${name}`))
    .sort();
}
