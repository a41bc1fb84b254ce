/**
 * Turning the raw query string / form body into parameters, with the limits of the public edge.
 * Pure: the HTTP layer hands over strings and maps the result to a status.
 */
export type ParamsResult =
  | { readonly ok: true; readonly params: Readonly<Record<string, string>> }
  | {
      readonly ok: false;
      readonly code: 'too-many-parameters' | 'malformed-callback';
      readonly message: string;
    };

/**
 * Collects `application/x-www-form-urlencoded` parts (the query first, then the body) into one
 * record. A name repeated with the same value counts once; repeated with different values is
 * malformed (which one would the control cover?).
 */
export function collectParams(parts: readonly string[], maxParameters: number): ParamsResult {
  const out: Record<string, string> = Object.create(null) as Record<string, string>;
  let count = 0;
  for (const part of parts) {
    if (part === '') continue;
    for (const [name, value] of new URLSearchParams(part)) {
      count += 1;
      if (count > maxParameters) {
        return {
          ok: false,
          code: 'too-many-parameters',
          message: `more than ${maxParameters} parameters`,
        };
      }
      if (name === '') continue;
      const earlier = out[name];
      if (earlier !== undefined && earlier !== value) {
        return {
          ok: false,
          code: 'malformed-callback',
          message: `parameter ${truncate(name)} repeated with different values`,
        };
      }
      out[name] = value;
    }
  }
  return { ok: true, params: { ...out } };
}

function truncate(name: string): string {
  return JSON.stringify(name.length > 64 ? `${name.slice(0, 64)}…` : name);
}
