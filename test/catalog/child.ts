/**
 * A second process on the same catalog file, for the cross-process tests (not a test file).
 *   race <dbPath> <payTo> <keys> <barrierFile>: waits for the barrier file, then records one
 *     settlement per key and prints the outcomes as JSON.
 *   lock <dbPath> [holdMs]: takes the write lock (BEGIN IMMEDIATE plus a pending write; the file
 *     may be new), prints "locked", and holds it until stdin closes, or for holdMs. (In WAL mode
 *     no lock of another process can block readers while our connection is open, so a write lock
 *     is the lock that matters.)
 */
import { existsSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import { openCatalog } from '../../src/catalog/index.ts';
import { BUSY_MACHINE_BOUNDS, settlement } from './fixtures.ts';

const [mode, dbPath, arg1, arg2, arg3] = process.argv.slice(2);

if (mode === 'race') {
  const payTo = arg1!;
  const keys = Number(arg2);
  const barrier = arg3!;
  const catalog = openCatalog({
    dbPath: dbPath!,
    ...BUSY_MACHINE_BOUNDS,
    logger: { warn() {}, error: (obj, msg) => process.stderr.write(`${msg} ${JSON.stringify(obj)}\n`) },
  });
  while (!existsSync(barrier)) await new Promise((r) => setTimeout(r, 2));
  const outcomes = [];
  for (let k = 0; k < keys; k++) {
    outcomes.push(
      await catalog.recordSettlement(
        settlement({ url: `https://race${k}.example.com/r`, payTo, description: `by ${payTo}`, amount: String(1000 + k) }),
      ),
    );
  }
  await catalog.close();
  process.stdout.write(`${JSON.stringify(outcomes)}\n`);
} else if (mode === 'lock') {
  const db = new DatabaseSync(dbPath!, { timeout: 5000 });
  db.exec('BEGIN IMMEDIATE');
  db.exec('CREATE TABLE lock_probe (held INTEGER)');
  process.stdout.write('locked\n');
  const release = () => {
    db.exec('ROLLBACK');
    db.close();
    process.exit(0);
  };
  if (arg1) setTimeout(release, Number(arg1));
  process.stdin.resume();
  process.stdin.on('end', release);
} else {
  process.stderr.write(`unknown mode ${mode}\n`);
  process.exit(2);
}
