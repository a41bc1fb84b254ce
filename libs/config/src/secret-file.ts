import { readFileSync } from 'node:fs';
import { ConfigError } from './config';

/** A secret given as `NAME` or as the file `NAME_FILE` names (a mounted Secret), both optional. */
export interface SecretSource {
  readonly app: string;
  /** The variable of the value; its file twin is `${name}_FILE`. */
  readonly name: string;
  readonly value: string | undefined;
  readonly file: string | undefined;
  /** What a value must be, for the error. */
  readonly expected: string;
  readonly readFile?: (path: string) => string;
}

/**
 * The secret's text from exactly one of `NAME` and `NAME_FILE` (the file as read, unchanged).
 * Throws ConfigError naming the variable, never the value: both given, neither, or an unreadable
 * file.
 */
export function secretValueOrFile(source: SecretSource): { text: string; variable: string } {
  const { app, name, value, file, expected } = source;
  const fail = (variable: string, wanted: string): never => {
    throw new ConfigError(app, [{ variable, expected: wanted, got: undefined }]);
  };
  if (value !== undefined && file !== undefined) {
    return fail(name, `either ${name} or ${name}_FILE, not both`);
  }
  if (value !== undefined) return { text: value, variable: name };
  if (file === undefined) return fail(name, `${expected}, in ${name} or ${name}_FILE`);
  const read = source.readFile ?? ((path: string) => readFileSync(path, 'utf8'));
  try {
    return { text: read(file), variable: `${name}_FILE` };
  } catch {
    return fail(`${name}_FILE`, `a readable file (could not read ${file})`);
  }
}
