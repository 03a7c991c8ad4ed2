import { Ajv, type ErrorObject, type Format, type ValidateFunction } from 'ajv';
import { apiDescription, type Operation, type Parameter, type SchemaObject } from './openapi.js';

/**
 * Request and response validation against GitHub's description. Validators are
 * compiled per operation on first use (a fake test touches ~20 of GitHub's ~1100
 * operations) and cached for the module instance.
 */

export interface RequestParts {
  params: Record<string, string>;
  query: Record<string, string | string[]>;
  /** Parsed JSON body; undefined when the request had none. */
  body: unknown;
}

export interface RequestProblem {
  /** Where the problem is: path parameters answer 404 on GitHub, the rest 422. */
  where: 'path' | 'query' | 'body';
  message: string;
}

interface OperationValidators {
  path: ValidateFunction;
  query: ValidateFunction;
  queryNames: Set<string>;
  body?: ValidateFunction;
  bodyRequired: boolean;
  /** Top-level body fields the description knows (undefined: any object is fine). */
  bodyFields?: Set<string>;
  responses: Map<string, ValidateFunction | null>;
}

const formats: Record<string, Format> = {
  // OpenAPI's numeric formats and GitHub's own ones are not string formats: accept.
  int32: true,
  int64: true,
  double: true,
  binary: true,
  timestamp: true,
  'repo.nwo': true,
  'uri-template': true,
  'date-time': /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/,
  date: /^\d{4}-\d{2}-\d{2}$/,
  email: /^[^\s@]+@[^\s@]+$/,
  uri: (value: string) => URL.canParse(value),
};

// Parameters arrive as strings: this instance coerces "42" to 42 as GitHub's router does.
const paramAjv = new Ajv({ strict: false, allErrors: true, logger: false, validateSchema: false, coerceTypes: 'array', formats });
// Bodies are JSON: no coercion, so `"sha": 1` or `"draft": "true"` is an error.
const bodyAjv = new Ajv({ strict: false, allErrors: true, logger: false, validateSchema: false, formats });
// Responses only need a yes/no and the first reason; allErrors would slow compilation.
const responseAjv = new Ajv({ strict: false, allErrors: false, logger: false, validateSchema: false, formats });

const cache = new Map<string, OperationValidators>();

function validatorsFor(operation: Operation): OperationValidators {
  let v = cache.get(operation.operationId);
  if (v) return v;
  const description = apiDescription();
  const paramsSchema = (where: Parameter['in'], closed: boolean): SchemaObject => {
    const params = operation.parameters.filter((p) => p.in === where);
    return description.bundle({
      type: 'object',
      properties: Object.fromEntries(params.map((p) => [p.name, p.schema ?? {}])),
      required: params.filter((p) => p.required).map((p) => p.name),
      // GitHub ignores unknown query parameters; a client sending one has a typo.
      ...(closed ? { additionalProperties: false } : {}),
    });
  };
  const bodySchema = operation.requestBody?.content?.['application/json']?.schema;
  v = {
    path: paramAjv.compile(paramsSchema('path', false)),
    query: paramAjv.compile(paramsSchema('query', true)),
    queryNames: new Set(operation.parameters.filter((p) => p.in === 'query').map((p) => p.name)),
    body: bodySchema ? bodyAjv.compile(description.bundle(bodySchema)) : undefined,
    bodyRequired: operation.requestBody?.required === true,
    bodyFields: bodySchema ? knownFields(bodySchema) : undefined,
    responses: new Map(),
  };
  cache.set(operation.operationId, v);
  return v;
}

/** Every way the request departs from the operation's description (empty: valid). */
export function validateRequest(operation: Operation, request: RequestParts): RequestProblem[] {
  const v = validatorsFor(operation);
  const problems: RequestProblem[] = [];
  // Ajv coerces in place: validate copies so handlers keep the strings they were sent.
  const params = { ...request.params };
  if (!v.path(params)) problems.push(...describe('path', v.path.errors));
  const query = { ...request.query };
  if (!v.query(query)) {
    for (const e of v.query.errors ?? []) {
      if (e.keyword === 'additionalProperties') {
        const name = String((e.params as { additionalProperty: string }).additionalProperty);
        problems.push({ where: 'query', message: `unknown query parameter "${name}" (known: ${[...v.queryNames].join(', ') || 'none'}); GitHub would ignore it silently` });
      } else problems.push(...describe('query', [e]));
    }
  }
  if (request.body === undefined) {
    if (v.bodyRequired) problems.push({ where: 'body', message: 'a JSON request body is required' });
  } else if (!v.body) {
    problems.push({ where: 'body', message: `${operation.method} ${operation.template} takes no JSON body` });
  } else {
    if (!v.body(request.body)) problems.push(...describe('body', v.body.errors));
    if (v.bodyFields && isPlainObject(request.body)) {
      for (const key of Object.keys(request.body)) {
        if (!v.bodyFields.has(key)) {
          problems.push({ where: 'body', message: `unknown body field "${key}" (known: ${[...v.bodyFields].join(', ')}); GitHub would ignore it silently` });
        }
      }
    }
  }
  return problems;
}

/**
 * Checks a response the fake is about to send. Returns the problems (empty: valid), or
 * null when the status code is not one the description documents for the operation.
 */
export function validateResponse(operation: Operation, status: number, body: unknown): string[] | null {
  const v = validatorsFor(operation);
  const key = String(status);
  const documented = operation.responses[key] ?? operation.responses[`${key[0]}XX`] ?? operation.responses.default;
  if (!documented) return null;
  if (!v.responses.has(key)) {
    const schema = documented.content?.['application/json']?.schema;
    v.responses.set(key, schema ? responseAjv.compile(apiDescription().bundle(schema)) : null);
  }
  const validate = v.responses.get(key);
  if (!validate || body === undefined) return [];
  return validate(body) ? [] : describe('body', validate.errors).map((p) => `response ${status}: ${p.message}`);
}

/** The response schema the description gives for this status (JSON content), if any. */
export function responseSchema(operation: Operation, status: number): SchemaObject | undefined {
  return operation.responses[String(status)]?.content?.['application/json']?.schema;
}

function describe(where: RequestProblem['where'], errors: ErrorObject[] | null | undefined): RequestProblem[] {
  return (errors ?? []).map((e) => ({
    where,
    message: `${where}${e.instancePath || ''} ${e.message ?? e.keyword}${e.params && Object.keys(e.params).length > 0 ? ` ${JSON.stringify(e.params)}` : ''}`,
  }));
}

/**
 * The top-level properties a body schema declares, across `oneOf`/`anyOf`/`allOf`
 * branches; undefined when the schema allows arbitrary fields or is not an object.
 */
function knownFields(schema: SchemaObject): Set<string> | undefined {
  const description = apiDescription();
  const root = description.deref(schema);
  // Only the body's own `additionalProperties` opens it; branches of a union often say
  // `additionalProperties: true` merely so they can constrain a subset of the fields.
  if (root.additionalProperties !== undefined && root.additionalProperties !== false) return undefined;
  const fields = new Set<string>();
  const visit = (s: SchemaObject): void => {
    const r = description.deref(s);
    if (r.type === 'array') return; // e.g. add-labels also accepts a bare array
    for (const k of ['oneOf', 'anyOf', 'allOf'] as const) {
      const branches = r[k];
      if (Array.isArray(branches)) for (const b of branches as SchemaObject[]) visit(b);
    }
    const props = r.properties as Record<string, unknown> | undefined;
    if (props) for (const k of Object.keys(props)) fields.add(k);
  };
  visit(root);
  return fields.size > 0 ? fields : undefined;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
