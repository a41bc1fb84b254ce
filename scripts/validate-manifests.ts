/**
 * Validates Kubernetes manifests (multi-document YAML files) against the API schemas of a pinned
 * Kubernetes version: kubernetes-models 5.1 (Kubernetes 1.34) for the built-in kinds, and the
 * @kubernetes-models packages of the operators the deployment docs use (KEDA ScaledObject,
 * Strimzi Kafka/KafkaNodePool/KafkaTopic, CloudNativePG Cluster). A kind with no schema here is
 * an error, so every manifest is checked.
 *
 *   tsx scripts/validate-manifests.ts FILE.yaml...
 *
 * Prints one line per document and a summary; exits 1 when any document is invalid. The models
 * are ES modules only, hence a script run by tsx rather than code jest loads.
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { parseAllDocuments } from 'yaml';

type Model = new (data: unknown) => { validate(): void };

/** apiVersion group → the module folder that holds its kinds. */
const PACKAGES: Readonly<Record<string, string>> = {
  'keda.sh': '@kubernetes-models/keda/keda.sh',
  'kafka.strimzi.io': '@kubernetes-models/strimzi-kafka-operator/kafka.strimzi.io',
  'postgresql.cnpg.io': '@kubernetes-models/cloudnative-pg/postgresql.cnpg.io',
};

function modulePath(apiVersion: string, kind: string): string {
  const slash = apiVersion.indexOf('/');
  if (slash < 0) return `kubernetes-models/${apiVersion}/${kind}`; // the core group: v1
  const group = apiVersion.slice(0, slash);
  const version = apiVersion.slice(slash + 1);
  return `${PACKAGES[group] ?? `kubernetes-models/${group}`}/${version}/${kind}`;
}

async function modelFor(apiVersion: string, kind: string): Promise<Model> {
  const path = modulePath(apiVersion, kind);
  let mod: Record<string, unknown>;
  try {
    mod = (await import(path)) as Record<string, unknown>;
  } catch {
    throw new Error(`no schema for ${apiVersion} ${kind} (looked for ${path})`);
  }
  const model = mod[kind];
  if (typeof model !== 'function') throw new Error(`no model ${kind} in ${path}`);
  return model as Model;
}

export interface Finding {
  readonly file: string;
  readonly kind: string;
  readonly name: string;
  readonly error?: string;
}

export async function validateFile(file: string): Promise<Finding[]> {
  const findings: Finding[] = [];
  for (const doc of parseAllDocuments(readFileSync(file, 'utf8'))) {
    if (doc.errors.length > 0) {
      findings.push({ file, kind: '?', name: '?', error: `YAML: ${doc.errors[0]?.message}` });
      continue;
    }
    const data: unknown = doc.toJS();
    if (data === null || data === undefined) continue; // an empty document between separators
    const object = data as { apiVersion?: unknown; kind?: unknown; metadata?: { name?: unknown } };
    const kind = typeof object.kind === 'string' ? object.kind : '?';
    const name = typeof object.metadata?.name === 'string' ? object.metadata.name : '?';
    if (typeof object.apiVersion !== 'string' || kind === '?') {
      findings.push({ file, kind, name, error: 'apiVersion and kind are required' });
      continue;
    }
    try {
      const Model = await modelFor(object.apiVersion, kind);
      new Model(data).validate();
      findings.push({ file, kind: `${object.apiVersion}/${kind}`, name });
    } catch (error) {
      findings.push({ file, kind: `${object.apiVersion}/${kind}`, name, error: String(error) });
    }
  }
  return findings;
}

async function main(files: string[]): Promise<number> {
  if (files.length === 0) {
    console.error('usage: tsx scripts/validate-manifests.ts FILE.yaml...');
    return 2;
  }
  let invalid = 0;
  let total = 0;
  for (const file of files) {
    for (const f of await validateFile(file)) {
      total += 1;
      if (f.error !== undefined) invalid += 1;
      console.log(
        `[manifests] ${basename(file)} ${f.kind} ${f.name}: ${f.error === undefined ? 'valid' : `INVALID: ${f.error}`}`,
      );
    }
  }
  console.log(`[manifests] ${total - invalid}/${total} valid in ${files.length} file(s)`);
  return invalid === 0 && total > 0 ? 0 : 1;
}

void main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
