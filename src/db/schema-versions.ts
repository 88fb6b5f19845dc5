/**
 * The schema versions a store's code opens (docs/OPERATIONS.md "Upgrading from an older schema"), and the steps that
 * bring a database to the newest: a new database (version 0) is created whole at the baseline, then taken on by each
 * migration since; a database at the baseline or later takes the migrations it lacks. The migrations before a baseline
 * were folded into the schema it creates, so a database older than it is brought to the baseline by the last code that
 * held them first. SQLite's runners (catalog and journal) and Postgres' (src/db/postgres.ts migrate) all take their
 * steps from here.
 */

/**
 * A schema with a baseline: `create` makes it whole at version `baseline` on a new database, `since` takes it on from
 * there, one version each.
 */
export interface Baseline<Step> {
  baseline: number;
  create: Step;
  since: readonly Step[];
}
/** A store's schema: a baseline, or its migrations alone, from version 0. */
export type Schema<Step> = readonly Step[] | Baseline<Step>;

const partsOf = <Step>(schema: Schema<Step>): { baseline: number; create?: Step; since: readonly Step[] } =>
  'since' in schema ? schema : { baseline: 0, since: schema };

/** The newest version a schema's code brings its database to. */
export function latestVersion(schema: Schema<unknown>): number {
  const { baseline, since } = partsOf(schema);
  return baseline + since.length;
}

/**
 * The steps, in order, that bring `component`'s database from `version` to the newest; refused when this code does not
 * open it: newer than its newest, or older than its baseline (a new database, version 0, is neither).
 */
export function stepsFrom<Step>(component: string, version: number, schema: Schema<Step>): Step[] {
  const { baseline, create, since } = partsOf(schema);
  const latest = baseline + since.length;
  if (version > latest) throw new Error(`${component} schema ${version} is newer than this code (${latest})`);
  if (version > 0 && version < baseline)
    throw new Error(
      `${component} schema ${version} is older than this code's first (${baseline}): migrate it with svc ${LAST_FULL_HISTORY} first (docs/OPERATIONS.md "Upgrading from an older schema")`,
    );
  return version === 0 && create !== undefined ? [create, ...since] : since.slice(version - baseline);
}

/** The last commit of svc that migrates its stores from any earlier schema version. */
export const LAST_FULL_HISTORY = '6b2863d';
