import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { connect, loadSqliteDriver, openSqliteFile, SQLITE_PAGE_SIZE } from './connect.js';

const mode = (file: string) => fs.statSync(file).mode & 0o777;

describe('openSqliteFile', () => {
  let parent = '';
  beforeEach(() => {
    parent = fs.mkdtempSync(path.join(os.tmpdir(), 'placard-connect-'));
  });
  afterEach(() => fs.rmSync(parent, { recursive: true, force: true }));

  it('creates the data directory and the database, WAL and shared-memory files for its owner only', () => {
    const previous = process.umask(0o022); // the usual umask, which would leave them world-readable
    try {
      const file = path.join(parent, 'data', 'placard.db');
      const sqlite = openSqliteFile(file);
      sqlite.exec('create table t (x); insert into t values (1)');
      expect(mode(path.dirname(file)).toString(8)).toBe('700');
      for (const created of [file, `${file}-wal`, `${file}-shm`])
        expect(mode(created).toString(8)).toBe('600');
      sqlite.close();
    } finally {
      process.umask(previous);
    }
  });

  it('makes a new store of 2,048-byte pages that checkpoints at 4 MiB of log, and keeps an older store at 4,096', () => {
    const pragma = (sqlite: ReturnType<typeof openSqliteFile>, name: string) =>
      Number(sqlite.pragma(name, { simple: true }));
    const fresh = openSqliteFile(path.join(parent, 'new.db'));
    fresh.exec('create table t (x)');
    expect([pragma(fresh, 'page_size'), pragma(fresh, 'wal_autocheckpoint')]).toEqual([
      SQLITE_PAGE_SIZE,
      2048,
    ]);
    fresh.close();
    // A store made by an earlier release, at SQLite's default page size, in WAL mode as it left it.
    const older = path.join(parent, 'older.db');
    const Driver = loadSqliteDriver();
    const made = new Driver(older);
    made.pragma('page_size = 4096');
    made.pragma('journal_mode = WAL');
    made.exec('create table t (x); insert into t values (1)');
    made.close();
    const reopened = openSqliteFile(older);
    reopened.exec('insert into t values (2)');
    expect([pragma(reopened, 'page_size'), pragma(reopened, 'wal_autocheckpoint')]).toEqual([4096, 1024]);
    expect(reopened.prepare('select count(*) as n from t').get()).toEqual({ n: 2 });
    reopened.close();
  });

  it('leaves an existing file with the permissions its operator gave it', () => {
    const file = path.join(parent, 'shared.db');
    fs.writeFileSync(file, '');
    fs.chmodSync(file, 0o640);
    openSqliteFile(file).close();
    expect(mode(file).toString(8)).toBe('640');
  });
});

describe('a SQLite transaction that SQLite itself ended', () => {
  it('fails with the error that ended it, not with the rollback that finds nothing to roll back', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placard-rollback-'));
    const connection = connect(`sqlite:${path.join(dir, 'placard.db')}`);
    try {
      // As after a full disk or an I/O error at commit: the transaction is gone when Kysely rolls back.
      const failing = connection.db.transaction().execute(async (tx) => {
        await sql`rollback`.execute(tx);
        throw new Error('database or disk is full');
      });
      await expect(failing).rejects.toThrow('database or disk is full');
    } finally {
      await connection.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a SQLite transaction beside another process that writes', () => {
  it('holds the write lock from its start, so a write between its read and its own waits for it', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placard-immediate-'));
    const file = path.join(dir, 'placard.db');
    const ours = connect(`sqlite:${file}`);
    // The other process: a serving instance, which never waits for a lock (busy timeout 0).
    const theirs = openSqliteFile(file, 0);
    try {
      await sql`create table t (x integer)`.execute(ours.db);
      await sql`insert into t values (1)`.execute(ours.db);
      let theirWrite: unknown = 'not tried';
      const total = await ours.db.transaction().execute(async (tx) => {
        const before = await sql<{ n: number }>`select sum(x) as n from t`.execute(tx);
        try {
          theirs.exec('insert into t values (10)');
          theirWrite = 'written';
        } catch (error) {
          theirWrite = (error as { code?: string }).code;
        }
        await sql`insert into t values (${before.rows[0].n + 1})`.execute(tx);
        return before.rows[0].n;
      });
      // Begun DEFERRED, their write would land and ours would fail with SQLITE_BUSY at once.
      expect(theirWrite).toBe('SQLITE_BUSY');
      expect(total).toBe(1);
      expect(theirs.prepare('select group_concat(x) as xs from t').get()).toEqual({ xs: '1,2' });
    } finally {
      theirs.close();
      await ours.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('loadSqliteDriver', () => {
  /** A `require` that records the names asked for and finds only `installed`. */
  function loader(installed: string[]) {
    const asked: string[] = [];
    const load = (name: string) => {
      asked.push(name);
      if (installed.includes(name)) return name;
      throw Object.assign(new Error(`Cannot find module '${name}'`), { code: 'MODULE_NOT_FOUND' });
    };
    return { asked, load };
  }

  it('takes better-sqlite3 12 on Node 20 and 13 on Node 22 and later', () => {
    for (const [version, driver] of [
      ['20.19.0', 'better-sqlite3'],
      ['22.12.0', 'better-sqlite3-13'],
      ['24.21.0', 'better-sqlite3-13'],
    ]) {
      const { asked, load } = loader(['better-sqlite3', 'better-sqlite3-13']);
      expect(loadSqliteDriver(version, load)).toBe(driver);
      expect(asked).toEqual([driver]);
    }
  });

  it('says to install again under this Node when 13 was left out by an install under Node 20', () => {
    const { load } = loader(['better-sqlite3']);
    expect(() => loadSqliteDriver('24.21.0', load)).toThrow(
      'Node 24.21.0 needs better-sqlite3 13, which npm installs only under Node 22 or later: the packages were installed under an older Node; run "npm ci" again under this one',
    );
  });
});
