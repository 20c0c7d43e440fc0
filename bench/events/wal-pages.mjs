// bench/events/wal-pages.mjs: which tables and indexes a SQLite server's commits write, read from
// its write-ahead log (used by commits.mjs). Every commit appends to the log each page it changed,
// one frame per page; a frame names its page, and SQLite's `dbstat` table names the tree (table
// or index) each page belongs to. The log is reused from its start after each checkpoint (at 4 MiB
// of log, `store/connect.ts`), so the frames of the current round, those carrying the salt in the log's
// header, are the last few dozen commits of the load: a sample taken while the server runs.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { ROOT } from '../lib.mjs';

const Database = createRequire(path.join(ROOT, 'apps/server/package.json'))('better-sqlite3');

const WAL_HEADER = 32;
const FRAME_HEADER = 24;

/**
 * The pages the commits in the log of `dbFile` wrote, by tree: `{ commits, frames, byTree }` with
 * `byTree` a Map from a table's or index's name to its frames. Reads a copy taken now (`copyDir`),
 * so the running server is not disturbed; frames after the last whole commit are left out.
 */
export function walPagesByTree(dbFile, copyDir) {
  fs.mkdirSync(copyDir, { recursive: true });
  const db = path.join(copyDir, 'copy.db');
  fs.copyFileSync(dbFile, db);
  fs.copyFileSync(`${dbFile}-wal`, `${db}-wal`);
  const log = fs.readFileSync(`${db}-wal`);
  const pageSize = log.readUInt32BE(8);
  const salts = [log.readUInt32BE(16), log.readUInt32BE(20)];
  const pages = [];
  let whole = 0;
  let commits = 0;
  for (let at = WAL_HEADER; at + FRAME_HEADER + pageSize <= log.length; at += FRAME_HEADER + pageSize) {
    // A frame of an earlier round (before the last checkpoint) carries other salts: the round ends.
    if (log.readUInt32BE(at + 8) !== salts[0] || log.readUInt32BE(at + 12) !== salts[1]) break;
    pages.push(log.readUInt32BE(at));
    if (log.readUInt32BE(at + 4) !== 0) {
      whole = pages.length;
      commits++;
    }
  }
  const reader = new Database(db);
  try {
    const treeOf = new Map(
      reader
        .prepare('select name, pageno from dbstat')
        .all()
        .map((row) => [row.pageno, row.name]),
    );
    const byTree = new Map();
    for (const page of pages.slice(0, whole)) {
      const tree = treeOf.get(page) ?? '(free pages)';
      byTree.set(tree, (byTree.get(tree) ?? 0) + 1);
    }
    return { commits, frames: whole, byTree };
  } finally {
    reader.close();
  }
}
