import { apiDescription, type SchemaObject } from './openapi.js';

/**
 * Completes a response the fake built so it has every field GitHub's description
 * marks required. Handlers set the fields with meaning (ids, shas, states, names,
 * links a client follows); the long tail (`gists_url`, `has_wiki`, `forks_count`, ...)
 * is filled here from the schema itself: null where the field is nullable, else the
 * first enum value, an empty string/array, 0, false or a fixed date. The result is
 * then validated against the same schema, so a wrong value the fake chose is still a
 * reported violation; only absent fields are completed.
 */

const FIXED_DATE = '2024-01-01T00:00:00Z';
const MAX_DEPTH = 16;

export function conform(schema: SchemaObject, value: unknown, placeholderBase: string): unknown {
  return fill(schema, value, { base: placeholderBase, name: '' }, 0);
}

interface Context {
  base: string;
  /** The property being filled: placeholder URLs name it. */
  name: string;
}

function fill(schemaIn: SchemaObject, value: unknown, ctx: Context, depth: number): unknown {
  const description = apiDescription();
  const schema = description.deref(schemaIn);
  if (depth > MAX_DEPTH) return value;

  if (Array.isArray(schema.allOf)) {
    let out = value;
    for (const branch of schema.allOf as SchemaObject[]) out = fill(branch, out, ctx, depth + 1);
    if (out === undefined) out = fillFresh(schema, ctx, depth);
    return out;
  }
  const branches = (schema.oneOf ?? schema.anyOf) as SchemaObject[] | undefined;
  if (Array.isArray(branches)) {
    if (value === null && schema.nullable === true) return null;
    const chosen = value === undefined ? firstUsable(branches) : (branches.find((b) => compatible(b, value)) ?? branches[0]);
    return chosen ? fill(chosen, value, ctx, depth + 1) : value;
  }
  if (value === undefined) return fillFresh(schema, ctx, depth);
  if (Array.isArray(value)) {
    const items = schema.items as SchemaObject | undefined;
    return items ? value.map((item) => fill(items, item, ctx, depth + 1)) : value;
  }
  if (value !== null && typeof value === 'object') {
    const props = (schema.properties ?? {}) as Record<string, SchemaObject>;
    const out: Record<string, unknown> = { ...(value as Record<string, unknown>) };
    for (const [key, propSchema] of Object.entries(props)) {
      if (key in out) out[key] = fill(propSchema, out[key], { ...ctx, name: key }, depth + 1);
    }
    for (const key of (schema.required ?? []) as string[]) {
      if (!(key in out) && props[key]) out[key] = fill(props[key], undefined, { ...ctx, name: key }, depth + 1);
    }
    return out;
  }
  return value;
}

function fillFresh(schema: SchemaObject, ctx: Context, depth: number): unknown {
  if (schema.nullable === true) return null;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  if (schema.default !== undefined && typeof schema.default !== 'object') return schema.default;
  switch (schema.type ?? (schema.properties ? 'object' : undefined)) {
    case 'object':
      return fill(schema, {}, ctx, depth + 1);
    case 'array': {
      const min = typeof schema.minItems === 'number' ? schema.minItems : 0;
      const items = (schema.items ?? {}) as SchemaObject;
      return Array.from({ length: min }, () => fill(items, undefined, ctx, depth + 1));
    }
    case 'integer':
    case 'number':
      return typeof schema.minimum === 'number' ? schema.minimum : 0;
    case 'boolean':
      return false;
    case 'string':
      if (schema.format === 'date-time') return FIXED_DATE;
      if (schema.format === 'date') return FIXED_DATE.slice(0, 10);
      if (schema.format === 'email') return 'noreply@github.com';
      if (schema.format === 'uri' || ctx.name === 'url' || ctx.name.endsWith('_url')) return `${ctx.base}/_not_modelled/${ctx.name || 'url'}`;
      return '';
    default:
      return null;
  }
}

function firstUsable(branches: SchemaObject[]): SchemaObject | undefined {
  return branches.find((b) => apiDescription().deref(b).type !== 'null') ?? branches[0];
}

/**
 * A shallow guess at whether `value` belongs to this `oneOf` branch: its type, its
 * enum, the enums of the properties it sets (e.g. a rule's `type`), and no field the
 * branch forbids. Enough to pick among GitHub's discriminated unions.
 */
function compatible(schemaIn: SchemaObject, value: unknown): boolean {
  const schema = apiDescription().deref(schemaIn);
  if (Array.isArray(schema.allOf)) return (schema.allOf as SchemaObject[]).every((b) => compatible(b, value));
  const branches = (schema.oneOf ?? schema.anyOf) as SchemaObject[] | undefined;
  if (Array.isArray(branches)) return branches.some((b) => compatible(b, value));
  if (value === null) return schema.nullable === true || schema.type === 'null';
  if (Array.isArray(schema.enum) && !schema.enum.includes(value)) return false;
  const type = schema.type;
  if (type !== undefined) {
    const actual = Array.isArray(value) ? 'array' : typeof value === 'number' ? (Number.isInteger(value) ? 'integer' : 'number') : typeof value;
    if (!(type === actual || (type === 'number' && actual === 'integer'))) return false;
  }
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const props = (schema.properties ?? {}) as Record<string, SchemaObject>;
    for (const [key, v] of Object.entries(value)) {
      const p = props[key];
      if (!p) {
        if (schema.additionalProperties === false) return false;
        continue;
      }
      const resolved = apiDescription().deref(p);
      if (Array.isArray(resolved.enum) && !resolved.enum.includes(v)) return false;
    }
  }
  return true;
}
