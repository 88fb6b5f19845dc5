/**
 * Engines over a store's Sql, written once for both stores as steps.ts explains (a step may also be another of the
 * store's acts, such as a listing's write). A store supplies its Sql (how one statement runs, and its dialect's few
 * differences) and keeps the transaction around the engine: SQLite's BEGIN IMMEDIATE, Postgres's locks.
 */
import { runAsync as runStepsAsync, runSync as runSteps, stepsOf, type Awaitable, type Steps } from './steps.ts';

/** An engine: yields thunks, receives each one's (awaited) answer, returns T; run by steps.ts's runners. */
export type Engine<T> = Steps<void, T>;

/** How a store runs one statement of an engine. */
export interface Sql {
  /** The placeholder of the statement's nth parameter (from 1). */
  p: (n: number) => string;
  /** A list of ids bound as one parameter: the subquery of parameter `n`, and the value bound for it. */
  idList: (n: number) => string;
  ids: (ids: ReadonlyArray<number | string>) => unknown;
  /** What a read appends to lock the rows it reads until the transaction ends ('' on SQLite: the write transaction holds the file). */
  lockRows: string;
  /** The condition that `column` is one of the values `subquery` reads, looked up in an index on `column` value by value. */
  inSubquery: (column: string, subquery: string) => string;
  rows: <T>(text: string, params: readonly unknown[]) => Awaitable<T[]>;
  /** Runs a write; how many rows it changed. */
  changes: (text: string, params: readonly unknown[]) => Awaitable<number>;
}

/** Yields one step (a thunk) and returns its (awaited) answer. */
export const step: <T>(thunk: () => Awaitable<T>) => Engine<T> = stepsOf<void>().run;

export const rows = <T>(sql: Sql, text: string, params: readonly unknown[] = []): Engine<T[]> => step(() => sql.rows<T>(text, params));
export const changes = (sql: Sql, text: string, params: readonly unknown[] = []): Engine<number> => step(() => sql.changes(text, params));

/** Runs an engine whose steps answer synchronously (SQLite). */
export const runSync = <T>(engine: Engine<T>): T => runSteps(undefined, engine);

/** Runs an engine whose steps answer asynchronously (Postgres). */
export const runAsync = <T>(engine: Engine<T>): Promise<T> => runStepsAsync(undefined, engine);

/**
 * A table's column types in each store's dialect: Postgres compares text byte by byte as SQLite does (COLLATE "C") and
 * keeps epoch milliseconds in BIGINT.
 */
export const columnTypes = (dialect: 'sqlite' | 'postgres') =>
  dialect === 'postgres' ? { text: 'TEXT COLLATE "C"', int: 'BIGINT' } : { text: 'TEXT', int: 'INTEGER' };
