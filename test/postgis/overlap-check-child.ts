// Runs the overlap check once in a process of its own, so a test can give it a small heap
// (test/postgis/overlaps-bounded.test.ts): node --max-old-space-size=N --import tsx <this> <database url>.
// Prints the outcome as one JSON line.
import { randomUUID } from 'node:crypto';
import { openWarehouse } from '../../warehouse/database.ts';
import { checkOverlapsAfterRun } from '../../warehouse/spatial/overlaps.ts';

const db = openWarehouse(process.argv[2]!, 1);
try {
  console.log(JSON.stringify(await checkOverlapsAfterRun(db, randomUUID())));
} finally {
  await db.destroy();
}
