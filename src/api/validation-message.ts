/**
 * Turns schema validation issues into one plain sentence that names the field,
 * e.g. "Field 'repo.owner' is required." Clients see this text as the 400 body.
 */
export interface ValidationIssue {
  keyword: string;
  instancePath: string;
  message?: string;
  params?: Record<string, unknown>;
}

const KIND_NAMES: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  boolean: 'true or false',
  object: 'an object',
  array: 'a list',
};

function fieldName(instancePath: string): string {
  return instancePath
    .split('/')
    .filter((s) => s !== '')
    .map((s, i) => (/^\d+$/.test(s) ? `[${s}]` : i === 0 ? s : `.${s}`))
    .join('');
}

function describeIssue(issue: ValidationIssue, context: string): string {
  const field = fieldName(issue.instancePath);
  const subject = field === '' ? (context === 'querystring' ? 'The query string' : 'The request body') : `Field '${field}'`;
  const params = issue.params ?? {};
  const message = issue.message ?? 'is not valid';
  switch (issue.keyword) {
    case 'invalid_type': {
      if (field === '') return `${subject} must be a JSON object.`;
      if (/received undefined/.test(message)) return `${subject} is required.`;
      const expected = String(params.expected ?? '');
      return `${subject} must be ${KIND_NAMES[expected] ?? expected}.`;
    }
    case 'too_small':
      if (params.origin === 'string' && params.minimum === 1) return `${subject} must not be empty.`;
      if (params.origin === 'array') return `${subject} must have at least ${String(params.minimum)} item(s).`;
      if (params.origin === 'string') return `${subject} must be at least ${String(params.minimum)} characters long.`;
      return `${subject} must be at least ${String(params.minimum)}.`;
    case 'too_big':
      if (params.origin === 'array') return `${subject} must have at most ${String(params.maximum)} item(s).`;
      if (params.origin === 'string') return `${subject} must be at most ${String(params.maximum)} characters long.`;
      return `${subject} must be at most ${String(params.maximum)}.`;
    case 'invalid_value':
      return Array.isArray(params.values)
        ? `${subject} must be one of: ${params.values.map(String).join(', ')}.`
        : `${subject} is not an accepted value.`;
    case 'invalid_union':
      return `${subject} does not have an accepted shape or value.`;
    case 'invalid_format':
      if (params.format === 'datetime') return `${subject} must be an ISO 8601 date-time with a time zone.`;
      return customRule(subject, message);
    default:
      return customRule(subject, message);
  }
}

/** Custom rules either complete the subject ("must be ...") or are a whole sentence. */
function customRule(subject: string, message: string): string {
  const text = message.replace(/^Invalid (input|string): /, '');
  const sentence = /^(must|is|are|should) /.test(text) ? `${subject} ${text}` : `${subject}: ${text}`;
  return sentence.endsWith('.') ? sentence : `${sentence}.`;
}

export function validationMessage(issues: ValidationIssue[], context: string): string {
  const first = issues[0];
  if (!first) return 'The request is not valid.';
  const extra = issues.length > 1 ? ` (and ${issues.length - 1} more problem${issues.length > 2 ? 's' : ''})` : '';
  return describeIssue(first, context).replace(/\.$/, `${extra}.`);
}
