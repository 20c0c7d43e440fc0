import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { connect } from '../../src/store/connect.js';
import { Store } from '../../src/store/store.js';

/**
 * PostgreSQL for tests: a server every machine here runs (trust auth). Each suite gets a database of
 * its own, created fresh and dropped afterwards, so suites can run in parallel.
 */
export const POSTGRES_ADMIN_URL =
  process.env['PLACARD_TEST_POSTGRES_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export interface TestDatabase {
  engine: 'sqlite' | 'postgres';
  url: string;
  /** Opens a new, migrated store on this database. */
  open(): Promise<Store>;
  drop(): Promise<void>;
}

export function tempDir(prefix = 'placard-test-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

async function adminQuery(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

async function openStore(url: string): Promise<Store> {
  const store = new Store(connect(url));
  await store.migrate();
  return store;
}

export async function createDatabase(engine: 'sqlite' | 'postgres'): Promise<TestDatabase> {
  if (engine === 'sqlite') {
    const dir = tempDir();
    const url = `sqlite:${path.join(dir, 'placard.db')}`;
    return {
      engine,
      url,
      open: () => openStore(url),
      drop: async () => fs.rmSync(dir, { recursive: true, force: true }),
    };
  }
  const name = `placard_test_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  await adminQuery(`create database ${name}`);
  const url = new URL(POSTGRES_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    engine,
    url: url.toString(),
    open: () => openStore(url.toString()),
    drop: () => adminQuery(`drop database if exists ${name} with (force)`),
  };
}

/**
 * Registers hooks that give the enclosing block one store on a fresh database of `engine`, handed
 * over through `onOpen`, and close it and drop the database after the block.
 */
export function eachBlockStore(
  engine: 'sqlite' | 'postgres',
  onOpen: (opened: { database: TestDatabase; store: Store }) => void,
): void {
  let database: TestDatabase | undefined;
  let store: Store | undefined;
  beforeAll(async () => {
    database = await createDatabase(engine);
    store = await database.open();
    onOpen({ database, store });
  });
  afterAll(async () => {
    await store?.close();
    await database?.drop();
  });
}

export const ALL_ENGINES = ['sqlite', 'postgres'] as const;
export type Engine = (typeof ALL_ENGINES)[number];

/**
 * Reads the ENGINES variable: a comma-separated list of engines (`sqlite`, `postgres`), unset or
 * blank for both. An unknown name is refused rather than ignored, so that a typo does not quietly
 * run nothing.
 */
export function parseEngines(value: string | undefined): Engine[] {
  if (value === undefined || value.trim() === '') return [...ALL_ENGINES];
  const names = value.split(',').map((name) => name.trim().toLowerCase());
  const unknown = names.filter((name) => !(ALL_ENGINES as readonly string[]).includes(name));
  if (unknown.length > 0)
    throw new Error(
      `ENGINES: unknown engine "${unknown.join('", "')}" (use ${ALL_ENGINES.join(', ')} or both, comma-separated)`,
    );
  return ALL_ENGINES.filter((engine) => names.includes(engine));
}

/** The engines the suites that run on each engine (`describe.each(ENGINES)`) run on: ENGINES=sqlite runs SQLite only. */
export const ENGINES = parseEngines(process.env['ENGINES']);
