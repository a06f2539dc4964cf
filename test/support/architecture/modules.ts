import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import ts from 'typescript';

/**
 * The import and export facts of TypeScript sources, read syntactically (no type checking, so the
 * architecture tests stay fast). Paths are relative to the repository root, with `/` separators.
 */

/** One relative import or re-export: which file it names, and which of that file's names it uses. */
export interface Import {
  target: string;
  /** Names used; `'*'` when every export may be used (an `export *`, a namespace used as a value, `import()`). */
  names: string[];
  /** `export * from`: the names of `target` are exported again by the importing file. */
  reExportsAll: boolean;
}

export interface ModuleFacts {
  path: string;
  imports: Import[];
  /** Names this file exports itself (`default` for a default export); names re-exported through `export *` are not listed. */
  exports: string[];
}

const hasExportModifier = (node: ts.Node): boolean =>
  ts.canHaveModifiers(node) && (ts.getModifiers(node) ?? []).some((modifier) => modifier.kind === ts.SyntaxKind.ExportKeyword);
const hasDefaultModifier = (node: ts.Node): boolean =>
  ts.canHaveModifiers(node) && (ts.getModifiers(node) ?? []).some((modifier) => modifier.kind === ts.SyntaxKind.DefaultKeyword);

function declaredNames(node: ts.Statement): string[] {
  if (hasDefaultModifier(node)) return ['default'];
  if (ts.isVariableStatement(node)) return node.declarationList.declarations.flatMap((declaration) => bindingNames(declaration.name));
  const named = node as ts.Statement & { name?: ts.Node };
  return named.name && ts.isIdentifier(named.name) ? [named.name.text] : [];
}

function bindingNames(name: ts.BindingName): string[] {
  if (ts.isIdentifier(name)) return [name.text];
  return name.elements.flatMap((element) => (ts.isOmittedExpression(element) ? [] : bindingNames(element.name)));
}

/** The names a namespace import uses: those read as `ns.name`, or every name when `ns` is used any other way. */
function namespaceUses(source: ts.SourceFile, namespace: string): string[] {
  const used = new Set<string>();
  let whole = false;
  const visit = (node: ts.Node, parent: ts.Node): void => {
    if (ts.isIdentifier(node) && node.text === namespace && !ts.isNamespaceImport(parent)) {
      if ((ts.isPropertyAccessExpression(parent) && parent.expression === node) || (ts.isQualifiedName(parent) && parent.left === node)) {
        used.add(ts.isPropertyAccessExpression(parent) ? parent.name.text : parent.right.text);
      } else {
        whole = true;
      }
    }
    ts.forEachChild(node, (child) => visit(child, node));
  };
  visit(source, source);
  return whole ? ['*'] : [...used];
}

function importedNames(source: ts.SourceFile, clause: ts.ImportClause | undefined): string[] {
  if (!clause) return [];
  const names = clause.name ? ['default'] : [];
  const bindings = clause.namedBindings;
  if (bindings && ts.isNamespaceImport(bindings)) names.push(...namespaceUses(source, bindings.name.text));
  if (bindings && ts.isNamedImports(bindings)) names.push(...bindings.elements.map((element) => (element.propertyName ?? element.name).text));
  return names;
}

const resolveSpecifier = (from: string, specifier: string): string => normalize(join(dirname(from), specifier.replace(/\.js$/, '.ts'))).split('\\').join('/');

function statementFacts(source: ts.SourceFile, path: string, node: ts.Statement, facts: ModuleFacts): void {
  const specifier = (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier) ? node.moduleSpecifier.text : undefined;
  const target = specifier?.startsWith('.') ? resolveSpecifier(path, specifier) : undefined;
  if (ts.isImportDeclaration(node)) {
    if (target) facts.imports.push({ target, names: importedNames(source, node.importClause), reExportsAll: false });
  } else if (ts.isExportDeclaration(node)) {
    const clause = node.exportClause;
    if (!clause) {
      if (target) facts.imports.push({ target, names: ['*'], reExportsAll: true });
    } else if (ts.isNamespaceExport(clause)) {
      facts.exports.push(clause.name.text);
      if (target) facts.imports.push({ target, names: ['*'], reExportsAll: false });
    } else {
      facts.exports.push(...clause.elements.map((element) => element.name.text));
      if (target) facts.imports.push({ target, names: clause.elements.map((element) => (element.propertyName ?? element.name).text), reExportsAll: false });
    }
  } else if (ts.isExportAssignment(node)) {
    facts.exports.push('default');
  } else if (hasExportModifier(node)) {
    facts.exports.push(...declaredNames(node));
  }
}

/**
 * `import('./x.js')`, `typeof import('./x.js').name` and `new URL('./x.js', import.meta.url)` (a
 * worker's file, or a module a child process imports) anywhere in the file.
 */
function dynamicImports(source: ts.SourceFile, path: string): Import[] {
  const found: Import[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [argument] = node.arguments;
      if (argument && ts.isStringLiteral(argument) && argument.text.startsWith('.')) found.push({ target: resolveSpecifier(path, argument.text), names: ['*'], reExportsAll: false });
    } else if (ts.isNewExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'URL' && node.arguments?.length === 2) {
      const [specifier, base] = node.arguments;
      if (ts.isStringLiteral(specifier) && specifier.text.startsWith('.') && base.getText(source) === 'import.meta.url') found.push({ target: resolveSpecifier(path, specifier.text), names: ['*'], reExportsAll: false });
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal) && node.argument.literal.text.startsWith('.')) {
      const name = node.qualifier ? (ts.isIdentifier(node.qualifier) ? node.qualifier.text : node.qualifier.left.getText(source)) : '*';
      found.push({ target: resolveSpecifier(path, node.argument.literal.text), names: [name], reExportsAll: false });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The facts of one file from its text; `path` is where it lives (relative imports resolve against it). */
export function moduleFacts(path: string, text: string): ModuleFacts {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.ES2022, false);
  const facts: ModuleFacts = { path, imports: [], exports: [] };
  for (const statement of source.statements) statementFacts(source, path, statement, facts);
  if (text.includes('import(') || text.includes('import.meta.url')) facts.imports.push(...dynamicImports(source, path));
  return facts;
}

function typeScriptFiles(root: string, dir: string): string[] {
  return readdirSync(join(root, dir)).flatMap((name) => {
    const path = dir ? `${dir}/${name}` : name;
    if (statSync(join(root, path)).isDirectory()) return typeScriptFiles(root, path);
    return path.endsWith('.ts') && !path.endsWith('.d.ts') ? [path] : [];
  });
}

/** The facts of every `.ts` file under `root`'s `dirs`, keyed by path relative to `root`. */
export function readModules(root: string, dirs: string[]): Map<string, ModuleFacts> {
  const paths = dirs.flatMap((dir) => typeScriptFiles(root, dir));
  return new Map(paths.map((path) => [path, moduleFacts(path, readFileSync(join(root, path), 'utf8'))]));
}

/** Every folder under `root`/`dir` (itself included), relative to `root`. */
export function foldersUnder(root: string, dir: string): string[] {
  const children = readdirSync(join(root, dir)).filter((name) => statSync(join(root, dir, name)).isDirectory());
  return [dir, ...children.flatMap((name) => foldersUnder(root, `${dir}/${name}`))];
}

export const relativePath = (from: string, to: string): string => relative(from, to).split('\\').join('/');
