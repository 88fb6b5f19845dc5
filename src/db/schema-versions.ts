/**
 * The schema versions a store's code opens (docs/OPERATIONS.md "Upgrading from an older schema"): a new database
 * (version 0, which the code creates whole at its newest), or one at the code's baseline or later, up to its newest.
 * The migrations before a baseline were folded into the schema it creates, so a database older than it is brought to
 * the baseline by the last code that held them first.
 */
export function checkSchemaVersion(component: string, version: number, versions: { baseline: number; latest: number }): void {
  if (version > versions.latest) throw new Error(`${component} schema ${version} is newer than this code (${versions.latest})`);
  if (version > 0 && version < versions.baseline)
    throw new Error(
      `${component} schema ${version} is older than this code's first (${versions.baseline}): migrate it with svc ${LAST_FULL_HISTORY} first (docs/OPERATIONS.md "Upgrading from an older schema")`,
    );
}

/** The last commit of svc that migrates its stores from any earlier schema version. */
export const LAST_FULL_HISTORY = '6b2863d';
