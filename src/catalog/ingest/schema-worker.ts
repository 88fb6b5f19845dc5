/**
 * The worker thread that compiles seller schemas and validates `info` against them
 * (docs/CATALOG.md "Seller schemas", docs/SECURITY.md). It runs apart from the thread that answers /verify and
 * /settle, so a schema that is slow to compile or to run can only cost this thread, which the
 * parent terminates when a job outlives its time budget.
 *
 * Memory stays bounded: nothing per schema outlives its job (no compiled code, no cache), the
 * thread has a heap limit, and the parent retires the thread after a number of jobs.
 *
 * Loaded by file path in a Worker, so it uses only erasable TypeScript syntax and imports nothing
 * from svc beyond the dependency-free thread-priority module.
 */
import module from 'node:module';
import { parentPort } from 'node:worker_threads';
import { lowerThreadPriority, BACKGROUND_THREAD_NICE } from '../../thread-priority.ts';

// A replacement worker must be ready quickly (a hostile schema costs one): Node's on-disk compile
// cache shortens loading Ajv, so Ajv is imported only after it is on.
module.enableCompileCache?.();
const { Ajv2020 } = await import('ajv/dist/2020.js');
const { Validator } = await import('@cfworker/json-schema');

export interface ValidationJob {
  id: number;
  schema: Record<string, unknown> | boolean;
  info: unknown;
}

export type ValidationAnswer = { id: number; ok: true } | { id: number; ok: false; kind: 'invalid' | 'too_complex'; reason: string };

/**
 * The seller's schema is never compiled to code: a generated validator per distinct schema grows
 * svc's memory with every schema, even when dropped. Ajv only checks the schema against the 2020-12
 * meta-schema (its meta validator is compiled once), and @cfworker/json-schema interprets the schema
 * against `info` (docs/CATALOG.md "Seller schemas").
 */
const metaValidator = new Ajv2020({ strict: false, validateFormats: false, addUsedSchema: false });

/** A schema or info found invalid, its reason cut to what a rejection carries. */
const invalid = (id: number, reason: string): ValidationAnswer => ({ id, ok: false, kind: 'invalid', reason: reason.slice(0, 300) });

function runValidation({ id, schema, info }: ValidationJob): ValidationAnswer {
  try {
    if (!metaValidator.validateSchema(schema)) {
      const first = metaValidator.errors?.[0];
      return invalid(
        id,
        `The schema does not compile: ${first?.instancePath || '(root)'} ${first?.message ?? 'is not a valid JSON Schema'}`,
      );
    }
    const result = new Validator(schema, '2020-12', true).validate(info);
    if (result.valid) return { id, ok: true };
    // The last error is the innermost one: the location that actually failed.
    const last = result.errors.at(-1);
    const where = last?.instanceLocation.replace(/^#/, '') || '(root)';
    return invalid(id, `info does not match the schema at ${where}: ${last?.error ?? 'invalid'}`);
  } catch (err) {
    // A stack overflow: recursion the static checks did not catch.
    if (err instanceof RangeError)
      return { id, ok: false, kind: 'too_complex', reason: 'Validating info against the schema recursed too deeply.' };
    return invalid(id, `The schema does not compile: ${(err as Error).message.split('\n')[0]}`);
  }
}

// Warm up before announcing readiness: the meta-schema validator compiles on first use, which must
// not count against the first seller's time budget.
runValidation({ id: 0, schema: { type: 'object', properties: { a: { type: 'string' } } }, info: { a: 'x' } });
// A hostile schema runs its whole budget on this thread: on a busy machine payments and the thread
// timing it (the catalog writer) come first. Lowered only once booted: the boot is svc's own fixed
// work, and a slow one leaves the next seller without a ready thread (docs/CATALOG.md "Seller schemas").
lowerThreadPriority(BACKGROUND_THREAD_NICE);
parentPort?.on('message', (job: ValidationJob) => parentPort!.postMessage(runValidation(job)));
parentPort?.postMessage('ready');
