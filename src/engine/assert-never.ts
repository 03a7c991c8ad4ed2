/** Exhaustive switches: adding a union member without handling it fails to compile. */
export function assertNever(value: never): never {
  throw new Error(`unhandled case: ${JSON.stringify(value)}`);
}
