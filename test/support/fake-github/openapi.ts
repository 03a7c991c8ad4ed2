import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

/**
 * GitHub's published REST description (`@octokit/openapi`), loaded once per module
 * instance and only when a fake first needs it.
 *
 * We read `api.github.com.json`, not the `.deref.json` twin: it is 13 MB instead of
 * 73 MB (≈0.1 s to parse instead of ≈0.5 s), and keeping the `$ref`s lets each
 * validator carry only the component schemas it reaches (see `bundle`). The package's
 * own index.js is never imported: it would parse every GHES variant too.
 */

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
/** A JSON Schema / OpenAPI 3.0 schema object, as it appears in the description. */
export type SchemaObject = { [key: string]: unknown };

export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  schema?: SchemaObject;
  /** GitHub's extension: this path parameter may contain `/` (refs, branch names). */
  'x-multi-segment'?: boolean;
}

export interface Operation {
  operationId: string;
  method: string;
  /** The path template from the description, e.g. `/repos/{owner}/{repo}/git/refs/{ref}`. */
  template: string;
  parameters: Parameter[];
  requestBody?: { required?: boolean; content?: Record<string, { schema?: SchemaObject }> };
  responses: Record<string, { content?: Record<string, { schema?: SchemaObject }> }>;
}

interface RawDescription {
  openapi: string;
  info: { version: string };
  paths: Record<string, Record<string, unknown>>;
  components: {
    schemas: Record<string, SchemaObject>;
    parameters: Record<string, Parameter>;
    responses: Record<string, Operation['responses'][string]>;
  };
}

interface Route {
  operation: Operation;
  regex: RegExp;
  names: string[];
  /** Literal characters in the template: the most specific template wins. */
  literalLength: number;
}

export type RouteMatch =
  | { kind: 'match'; operation: Operation; params: Record<string, string> }
  /** The path exists with other methods. */
  | { kind: 'method_not_allowed'; allowed: string[] }
  | { kind: 'no_route' };

const require = createRequire(import.meta.url);
const HTTP_METHODS = new Set(['get', 'put', 'post', 'delete', 'patch', 'head', 'options']);

let loaded: ApiDescription | undefined;

/** The description, parsed on first use and shared by every fake in this module instance. */
export function apiDescription(): ApiDescription {
  loaded ??= new ApiDescription(
    JSON.parse(readFileSync(require.resolve('@octokit/openapi/generated/api.github.com.json'), 'utf8')) as RawDescription,
  );
  return loaded;
}

export class ApiDescription {
  private routesByMethod = new Map<string, Route[]>();
  private operationsById = new Map<string, Operation>();
  private ajvComponents = new Map<string, SchemaObject>();

  constructor(private readonly raw: RawDescription) {
    // Only the cheap part happens here: one Operation record per (path, method). Regexes
    // are built per method on first use, schemas resolved and compiled per operation.
    for (const [template, item] of Object.entries(raw.paths)) {
      for (const [method, value] of Object.entries(item)) {
        if (!HTTP_METHODS.has(method)) continue;
        const op = value as Omit<Operation, 'method' | 'template' | 'parameters'> & { parameters?: unknown[] };
        this.operationsById.set(op.operationId, {
          ...op,
          method: method.toUpperCase(),
          template,
          parameters: (op.parameters ?? []).map((p) => this.resolve<Parameter>(p)),
          responses: Object.fromEntries(Object.entries(op.responses ?? {}).map(([code, r]) => [code, this.resolve<Operation['responses'][string]>(r)])),
        });
      }
    }
  }

  get version(): string {
    return this.raw.info.version;
  }

  get componentSchemas(): Record<string, SchemaObject> {
    return this.raw.components.schemas;
  }

  operation(operationId: string): Operation | undefined {
    return this.operationsById.get(operationId);
  }

  /**
   * Finds the operation for a request path as sent on the wire (percent-encoded).
   * Octokit encodes `/` inside refs and branch names as %2F, but GitHub also accepts
   * them raw, so `x-multi-segment` parameters may span several segments.
   */
  match(method: string, rawPath: string): RouteMatch {
    const candidates: Array<{ route: Route; params: Record<string, string> }> = [];
    for (const route of this.routes(method.toUpperCase())) {
      const m = route.regex.exec(rawPath);
      if (!m) continue;
      const params: Record<string, string> = {};
      let decodable = true;
      route.names.forEach((name, i) => {
        try {
          params[name] = decodeURIComponent(m[i + 1] ?? '');
        } catch {
          decodable = false;
        }
      });
      if (decodable) candidates.push({ route, params });
    }
    if (candidates.length > 0) {
      candidates.sort((a, b) => b.route.literalLength - a.route.literalLength);
      const best = candidates[0]!;
      return { kind: 'match', operation: best.route.operation, params: best.params };
    }
    const allowed = [...HTTP_METHODS]
      .map((m) => m.toUpperCase())
      .filter((m) => m !== method.toUpperCase() && this.routes(m).some((r) => r.regex.test(rawPath)));
    return allowed.length > 0 ? { kind: 'method_not_allowed', allowed } : { kind: 'no_route' };
  }

  /**
   * A schema that Ajv can compile on its own: the given schema plus exactly the
   * component schemas it reaches, placed under `components.schemas` of the root so the
   * description's own `#/components/schemas/...` pointers resolve unchanged. (Adding
   * all components to Ajv up front costs ≈0.2 s of traversal per process.) Schemas are
   * passed through `forAjv` first.
   */
  bundle(schema: SchemaObject): SchemaObject {
    const reached: Record<string, SchemaObject> = {};
    const visit = (node: unknown): void => {
      if (Array.isArray(node)) {
        node.forEach(visit);
        return;
      }
      if (node === null || typeof node !== 'object') return;
      for (const [key, value] of Object.entries(node)) {
        if (key === '$ref' && typeof value === 'string') {
          const name = schemaRefName(value);
          if (name !== undefined && !(name in reached)) {
            reached[name] = this.componentForAjv(name, value);
            visit(reached[name]);
          }
        } else {
          visit(value);
        }
      }
    };
    const root = forAjv(schema) as SchemaObject;
    visit(root);
    return { allOf: [root], components: { schemas: reached } };
  }

  private componentForAjv(name: string, ref: string): SchemaObject {
    let out = this.ajvComponents.get(name);
    if (!out) {
      const target = this.raw.components.schemas[name];
      if (!target) throw new Error(`fake-github: dangling $ref ${ref} in GitHub's description`);
      out = forAjv(target) as SchemaObject;
      this.ajvComponents.set(name, out);
    }
    return out;
  }

  /** Follows a `#/components/schemas/...` reference (one level); other values pass through. */
  deref(schema: SchemaObject): SchemaObject {
    let current = schema;
    for (let hops = 0; typeof current.$ref === 'string' && hops < 20; hops++) {
      const name = schemaRefName(current.$ref);
      const target = name === undefined ? undefined : this.raw.components.schemas[name];
      if (!target) throw new Error(`fake-github: cannot resolve ${current.$ref}`);
      current = target;
    }
    return current;
  }

  private resolve<T>(value: unknown): T {
    const ref = (value as { $ref?: unknown }).$ref;
    if (typeof ref !== 'string') return value as T;
    const [, , section, name] = ref.split('/');
    const table = (this.raw.components as unknown as Record<string, Record<string, unknown>>)[section ?? ''];
    const target = table?.[decodeURIComponent(name ?? '')];
    if (target === undefined) throw new Error(`fake-github: cannot resolve ${ref}`);
    return this.resolve<T>(target);
  }

  private routes(method: string): Route[] {
    let routes = this.routesByMethod.get(method);
    if (!routes) {
      routes = [...this.operationsById.values()].filter((op) => op.method === method).map((op) => compileRoute(op));
      this.routesByMethod.set(method, routes);
    }
    return routes;
  }
}

function compileRoute(operation: Operation): Route {
  const names: string[] = [];
  let literalLength = 0;
  const pattern = operation.template.replace(/\{([^}]+)\}|[^{]+/g, (part, name?: string) => {
    if (name === undefined) {
      literalLength += part.length;
      return part.replace(/[.*+?^$()|[\]\\]/g, '\\$&');
    }
    names.push(name);
    const param = operation.parameters.find((p) => p.in === 'path' && p.name === name);
    return param?.['x-multi-segment'] ? '(.+?)' : '([^/]+)';
  });
  return { operation, regex: new RegExp(`^${pattern}$`), names, literalLength };
}

/**
 * OpenAPI 3.0's `nullable` as JSON Schema: Ajv accepts `nullable` only beside `type`,
 * and GitHub writes nullable enums without `null` in the enum (e.g. a check run's
 * `conclusion`, null until it completes), which JSON Schema would then refuse. Examples
 * are dropped: they are large and never validated.
 */
function forAjv(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(forAjv);
  if (node === null || typeof node !== 'object') return node;
  const out: SchemaObject = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === 'example' || key === 'examples') continue;
    if (key === 'enum' || key === 'required' || key === 'default') out[key] = value;
    // Maps from names to schemas: every name is kept, even one called "example".
    else if ((key === 'properties' || key === 'patternProperties') && value && typeof value === 'object') {
      out[key] = Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, forAjv(sub)]));
    } else out[key] = forAjv(value);
  }
  if (out.nullable === true) {
    if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
    if (out.type === undefined) {
      delete out.nullable;
      return { anyOf: [out, { type: 'null' }] };
    }
  }
  return out;
}

function schemaRefName(ref: string): string | undefined {
  const prefix = '#/components/schemas/';
  return ref.startsWith(prefix) ? decodeURIComponent(ref.slice(prefix.length)) : undefined;
}
