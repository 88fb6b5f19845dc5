/**
 * The worker thread that compiles seller schemas and validates `info` against them
 * (docs/CATALOG.md, docs/SECURITY.md). It runs apart from the thread that answers /verify and
 * /settle, so a schema that is slow to compile or to run can only cost this thread, which the
 * parent terminates when a job outlives its time budget.
 *
 * Memory stays bounded: Ajv keeps every compiled schema and its generated code in the instance's
 * shared scope even after `removeSchema`, so the whole instance (and the cache of validators it
 * produced) is dropped after a fixed number of compiles or when the heap has grown past a mark.
 *
 * Loaded by file path in a Worker, so it uses only erasable TypeScript syntax and imports nothing
 * from svc.
 */
import { getHeapStatistics } from 'node:v8';
import { parentPort } from 'node:worker_threads';
import { Ajv2020 } from 'ajv/dist/2020.js';

export interface ValidationJob {
  id: number;
  schema: Record<string, unknown> | boolean;
  info: unknown;
}

export type ValidationAnswer =
  | { id: number; ok: true }
  | { id: number; ok: false; kind: 'invalid' | 'too_complex'; reason: string };

/** A fresh Ajv is made after this many compiles… */
const RECYCLE_AFTER_COMPILES = 200;
/** …or once the heap holds more than this. */
const RECYCLE_ABOVE_HEAP_BYTES = 48 * 1024 * 1024;
/** A seller settles with the same schema again and again; compiling costs ms, validating µs. */
const CACHE_SIZE = 64;

function newAjv() {
  // optimize: false halves compile time; the generated code validates a ≤ 64 KiB `info` either way.
  return new Ajv2020({ strict: false, allErrors: false, validateFormats: false, inlineRefs: false, addUsedSchema: false, code: { optimize: false } });
}
type Validator = ReturnType<ReturnType<typeof newAjv>['compile']>;

let ajv = newAjv();
let compiles = 0;
const validators = new Map<string, Validator>();

function recycleIfDue(): void {
  if (compiles < RECYCLE_AFTER_COMPILES && getHeapStatistics().used_heap_size < RECYCLE_ABOVE_HEAP_BYTES) return;
  validators.clear();
  ajv = newAjv();
  compiles = 0;
}

function compiled(schema: Record<string, unknown> | boolean): Validator {
  const key = JSON.stringify(schema);
  const hit = validators.get(key);
  if (hit) {
    validators.delete(key); // re-insert: most recently used last
    validators.set(key, hit);
    return hit;
  }
  recycleIfDue();
  compiles++;
  const validate = ajv.compile(schema);
  validators.set(key, validate);
  if (validators.size > CACHE_SIZE) validators.delete(validators.keys().next().value!);
  return validate;
}

export function runValidation({ id, schema, info }: ValidationJob): ValidationAnswer {
  let validate: Validator;
  try {
    validate = compiled(schema);
  } catch (err) {
    if (err instanceof RangeError) return { id, ok: false, kind: 'too_complex', reason: 'The schema is too complex to compile.' };
    return { id, ok: false, kind: 'invalid', reason: `The schema does not compile: ${(err as Error).message}`.slice(0, 300) };
  }
  try {
    if (validate(info)) return { id, ok: true };
  } catch (err) {
    // A stack overflow while validating: recursion the static checks did not catch.
    if (err instanceof RangeError) return { id, ok: false, kind: 'too_complex', reason: 'Validating info against the schema recursed too deeply.' };
    throw err;
  }
  const first = validate.errors?.[0];
  const where = first?.instancePath || '(root)';
  return { id, ok: false, kind: 'invalid', reason: `info does not match the schema at ${where}: ${first?.message ?? 'invalid'}`.slice(0, 300) };
}

parentPort?.on('message', (job: ValidationJob) => parentPort!.postMessage(runValidation(job)));
parentPort?.postMessage('ready');
