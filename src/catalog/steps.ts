/**
 * Engines written once for both stores (search-engine.ts, price.ts pricePage) are generators: each yields a statement as
 * a function of its store's port and receives the answer, so one engine serves SQLite's synchronous statements (runSync)
 * and Postgres's asynchronous ones (runAsync). Statements that do not depend on each other are yielded together
 * (`together`): runAsync sends them at once, one round trip to a server, where runSync runs them in turn.
 */
/** An answer now (SQLite) or later (Postgres). */
export type Awaitable<T> = T | Promise<T>;

/** One statement: a function of the store's port; several that do not depend on each other, yielded together. */
type Step<I> = (index: I) => unknown;
export type Steps<I, T> = Generator<Step<I> | Step<I>[], T, unknown>;

/** `run` (one statement, its answer) and `together` (several, their answers in order) for engines over port `I`. */
export function stepsOf<I>() {
  return {
    *run<T>(this: void, step: (index: I) => Awaitable<T>): Steps<I, T> {
      return (yield step) as T;
    },
    *together<T extends unknown[]>(this: void, ...steps: { [K in keyof T]: (index: I) => Awaitable<T[K]> }): Steps<I, T> {
      return (yield steps) as T;
    },
  };
}

/** Runs the engine on a store whose statements answer synchronously (SQLite): statements yielded together in turn. */
export function runSync<I, T>(index: I, engine: Steps<I, T>): T {
  const answer = (step: Step<I>) => {
    const answered = step(index);
    if (answered instanceof Promise) throw new Error('a synchronous store answered with a promise');
    return answered;
  };
  let next = engine.next();
  while (!next.done) next = engine.next(Array.isArray(next.value) ? next.value.map(answer) : answer(next.value));
  return next.value;
}

/**
 * Runs the engine on a store whose statements answer asynchronously (Postgres). Statements yielded together are all
 * issued before any is awaited (on a pipelined connection they go out in one write: postgres/search.ts), and all
 * settle before the engine goes on or fails.
 */
export async function runAsync<I, T>(index: I, engine: Steps<I, T>): Promise<T> {
  let next = engine.next();
  while (!next.done) {
    const step = next.value;
    if (!Array.isArray(step)) {
      next = engine.next(await step(index));
      continue;
    }
    const settled = await Promise.allSettled(step.map((s) => new Promise((resolve) => resolve(s(index)))));
    const failed = settled.find((answer) => answer.status === 'rejected');
    if (failed) throw failed.reason;
    next = engine.next(settled.map((answer) => (answer as PromiseFulfilledResult<unknown>).value));
  }
  return next.value;
}
