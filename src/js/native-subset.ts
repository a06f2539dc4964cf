/**
 * Design functions small enough to run without the sandbox: a function of one document argument
 * whose body uses only `if`/`else`, blocks, `return;`, calls of a host function (`index`), and
 * expressions over the document (member reads, literals, object literals, `!`, `typeof`, unary
 * `-`, `&&`, `||`, `??`, `?:`, comparisons and arithmetic) is compiled here to closures that run on
 * the host. No loop, no assignment, no other name: such a function is bounded by its own size and
 * can reach nothing but the document and the host function.
 *
 * The closures answer as QuickJS would or not at all: wherever the two could differ (a read of
 * `null`'s property, which throws there; a name on a built-in prototype; `==` or `<` between
 * objects; a host call's arguments it would refuse) they throw `UNSURE`, and the caller runs that
 * document in the sandbox instead. A source outside the subset compiles to `undefined`: every
 * document goes to the sandbox. The source is read as the sandbox reads it (prelude.ts `evaluate`).
 */
import { parse } from 'acorn';

/** Thrown where the host cannot be sure to answer as the sandbox would. */
export const UNSURE: unique symbol = Symbol('unsure');
/** Thrown while compiling a construct outside the subset. */
const OUTSIDE: unique symbol = Symbol('outside the subset');

/** A host function's body: its arguments as evaluated; may throw `UNSURE`. */
export type HostFunction = (args: unknown[]) => void;
/** A compiled function: runs it on one document (throws `UNSURE` where unsure). */
export type NativeFunction = (doc: unknown, hosts: Readonly<Record<string, HostFunction>>) => void;

type Env = { doc: unknown; hosts: Readonly<Record<string, HostFunction>> };
type Expr = (env: Env) => unknown;
/** Runs a statement; true when it returned. */
type Stmt = (env: Env) => boolean;
// acorn's node types are a union this module walks by `type`; a loose shape keeps the walk short.
type Node = { type: string; [field: string]: any }; // eslint-disable-line @typescript-eslint/no-explicit-any

export function unsure(): never {
  throw UNSURE;
}

function outside(): never {
  throw OUTSIDE;
}

/** Names the built-in prototypes answer (QuickJS's are a subset of Node's, test/unit/js/native-subset.test.ts). */
const PROTOTYPES = { object: Object.prototype, array: Array.prototype, string: String.prototype, number: Number.prototype, boolean: Boolean.prototype };
const ARRAY_INDEX = /^(0|[1-9]\d{0,8})$/;

/** `value[key]` as the sandbox reads it from a parsed JSON document, or UNSURE. */
export function member(value: unknown, key: string): unknown {
  if (value === null || value === undefined) return unsure();
  if (Array.isArray(value)) {
    if (key === 'length') return value.length;
    if (ARRAY_INDEX.test(key)) return value[Number(key)];
    return key in PROTOTYPES.array ? unsure() : undefined;
  }
  if (typeof value === 'object') return Object.hasOwn(value, key) ? (value as Record<string, unknown>)[key] : key in PROTOTYPES.object ? unsure() : undefined;
  if (typeof value === 'string') return key === 'length' ? value.length : key in PROTOTYPES.string || /^\d+$/.test(key) ? unsure() : undefined;
  return key in (typeof value === 'number' ? PROTOTYPES.number : PROTOTYPES.boolean) ? unsure() : undefined;
}

const typeOf = (value: unknown): string => (value === null ? 'object' : typeof value);
const primitive = (value: unknown): boolean => value === null || typeof value !== 'object';
const numbers = (a: unknown, b: unknown): boolean => typeof a === 'number' && typeof b === 'number';
const sameScalar = (a: unknown, b: unknown): boolean => (typeof a === 'number' || typeof a === 'string') && typeof a === typeof b;

/** Binary operators: each answers or is unsure of operands whose conversions could differ. */
const BINARY: Readonly<Record<string, (a: unknown, b: unknown) => unknown>> = {
  '===': (a, b) => a === b,
  '!==': (a, b) => a !== b,
  '==': (a, b) => (primitive(a) && primitive(b) ? a == b : unsure()), // eslint-disable-line eqeqeq
  '!=': (a, b) => (primitive(a) && primitive(b) ? a != b : unsure()), // eslint-disable-line eqeqeq
  '<': (a, b) => (sameScalar(a, b) ? (a as number) < (b as number) : unsure()),
  '<=': (a, b) => (sameScalar(a, b) ? (a as number) <= (b as number) : unsure()),
  '>': (a, b) => (sameScalar(a, b) ? (a as number) > (b as number) : unsure()),
  '>=': (a, b) => (sameScalar(a, b) ? (a as number) >= (b as number) : unsure()),
  '+': (a, b) => (sameScalar(a, b) ? (a as number) + (b as number) : unsure()),
  '-': (a, b) => (numbers(a, b) ? (a as number) - (b as number) : unsure()),
  '*': (a, b) => (numbers(a, b) ? (a as number) * (b as number) : unsure()),
  '/': (a, b) => (numbers(a, b) ? (a as number) / (b as number) : unsure()),
};

interface Scope {
  readonly param: string;
  readonly hosts: ReadonlySet<string>;
}

function literal(node: Node): Expr {
  const [value, raw] = [node['value'] as unknown, node['raw'] as string];
  if (node['regex'] !== undefined || node['bigint'] !== undefined) outside();
  // Legacy octal literals and escapes: read alike in sloppy mode, but not worth being sure of.
  if (/^0\d/.test(raw) || (typeof value === 'string' && /\\[0-9]/.test(raw))) outside();
  return () => value;
}

function keyOf(node: Node, computed: boolean): string {
  if (!computed) return node['type'] === 'Identifier' ? (node['name'] as string) : outside();
  const value = node['type'] === 'Literal' ? node['value'] : undefined;
  if (typeof value === 'string') return value;
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? String(value) : outside();
}

function objectLiteral(node: Node, scope: Scope): Expr {
  const entries = (node['properties'] as Node[]).map((property) => {
    if (property.type !== 'Property' || property['kind'] !== 'init' || property['method'] || property['shorthand'] || property['computed']) outside();
    const key = property['key'].type === 'Literal' && typeof property['key'].value === 'string' ? (property['key'].value as string) : keyOf(property['key'], false);
    // `__proto__: x` sets the prototype; nothing else in a literal does.
    if (key === '__proto__') outside();
    return [key, expression(property['value'], scope)] as const;
  });
  return (env) => {
    const object: Record<string, unknown> = {};
    for (const [key, value] of entries) object[key] = value(env);
    return object;
  };
}

function call(node: Node, scope: Scope): Expr {
  const callee = node['callee'] as Node;
  if (node['optional'] || callee.type !== 'Identifier' || !scope.hosts.has(callee['name'])) outside();
  const name = callee['name'] as string;
  const args = (node['arguments'] as Node[]).map((arg) => (arg.type === 'SpreadElement' ? outside() : expression(arg, scope)));
  return (env) => {
    env.hosts[name]!(args.map((arg) => arg(env)));
    return undefined;
  };
}

function unary(node: Node, scope: Scope): Expr {
  const argument = expression(node['argument'], scope);
  if (node['operator'] === '!') return (env) => !argument(env);
  if (node['operator'] === 'typeof') return (env) => typeOf(argument(env));
  if (node['operator'] === '-') {
    return (env) => {
      const value = argument(env);
      return typeof value === 'number' ? -value : unsure();
    };
  }
  return outside();
}

function logical(node: Node, scope: Scope): Expr {
  const [left, right] = [expression(node['left'], scope), expression(node['right'], scope)];
  if (node['operator'] === '&&') return (env) => left(env) && right(env);
  if (node['operator'] === '||') return (env) => left(env) || right(env);
  return (env) => left(env) ?? right(env);
}

function expression(node: Node, scope: Scope): Expr {
  switch (node.type) {
    case 'Identifier':
      if (node['name'] === scope.param) return (env) => env.doc;
      return node['name'] === 'undefined' ? () => undefined : outside();
    case 'Literal':
      return literal(node);
    case 'MemberExpression': {
      if (node['optional']) outside();
      const [object, key] = [expression(node['object'], scope), keyOf(node['property'], node['computed'] as boolean)];
      return (env) => member(object(env), key);
    }
    case 'UnaryExpression':
      return unary(node, scope);
    case 'BinaryExpression': {
      const operate = BINARY[node['operator'] as string] ?? outside();
      const [left, right] = [expression(node['left'], scope), expression(node['right'], scope)];
      return (env) => operate(left(env), right(env));
    }
    case 'LogicalExpression':
      return logical(node, scope);
    case 'ConditionalExpression': {
      const [test, then, otherwise] = [expression(node['test'], scope), expression(node['consequent'], scope), expression(node['alternate'], scope)];
      return (env) => (test(env) ? then(env) : otherwise(env));
    }
    case 'ObjectExpression':
      return objectLiteral(node, scope);
    case 'CallExpression':
      return call(node, scope);
    default:
      return outside();
  }
}

function statement(node: Node, scope: Scope): Stmt {
  switch (node.type) {
    case 'BlockStatement': {
      const body = (node['body'] as Node[]).map((child) => statement(child, scope));
      return (env) => body.some((run) => run(env));
    }
    case 'EmptyStatement':
      return () => false;
    case 'IfStatement': {
      const test = expression(node['test'], scope);
      const then = statement(node['consequent'], scope);
      const otherwise = node['alternate'] ? statement(node['alternate'], scope) : () => false;
      return (env) => (test(env) ? then(env) : otherwise(env));
    }
    case 'ReturnStatement':
      return node['argument'] ? outside() : () => true;
    case 'ExpressionStatement': {
      // A directive ('use strict') changes how the rest reads: left to the sandbox.
      if (node['directive'] !== undefined) outside();
      const run = expression(node['expression'], scope);
      return (env) => {
        run(env);
        return false;
      };
    }
    default:
      return outside();
  }
}

/** The function's closure, or undefined when `source` is not one function of the subset. */
export function compileNative(source: string, hosts: readonly string[]): NativeFunction | undefined {
  const trimmed = source.replace(/[\s;]+$/, '');
  try {
    const program = parse(`(${trimmed}\n)`, { ecmaVersion: 2020, sourceType: 'script' }) as unknown as Node;
    const only = program['body'].length === 1 ? (program['body'][0] as Node) : outside();
    const fn = only.type === 'ExpressionStatement' ? (only['expression'] as Node) : outside();
    if (fn.type !== 'FunctionExpression' || fn['async'] || fn['generator'] || fn['params'].length !== 1 || fn['params'][0].type !== 'Identifier') outside();
    const param = fn['params'][0].name as string;
    // A function's own name is in scope in its body: `undefined` or a host's name would mean it.
    if (fn['id'] !== null && (fn['id'].name === 'undefined' || hosts.includes(fn['id'].name))) outside();
    const scope: Scope = { param, hosts: new Set(hosts.filter((name) => name !== param)) };
    const body = statement(fn['body'], scope);
    return (doc, hostFunctions) => {
      body({ doc, hosts: hostFunctions });
    };
  } catch (error) {
    // A syntax error, a construct outside the subset, or a source nested too deep to walk.
    if (error === OUTSIDE || error instanceof SyntaxError || error instanceof RangeError) return undefined;
    throw error;
  }
}
