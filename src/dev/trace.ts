/**
 * The readable trace `npm run dev` prints: numbered story steps, indented details, and progress
 * lines that show what is starting and how long it took. Plain text when stdout is not a
 * terminal (tests, pipes), a little colour when it is. Never given a secret except the
 * explicitly labelled dev-only demo keys.
 */
/** A story step whose outcome is not what the trace is about to claim. */
export class StoryError extends Error {}

/** Checks a claim before the trace prints it: a story that completes really happened. */
export function expectThat(condition: unknown, message: string): asserts condition {
  if (!condition) throw new StoryError(message);
}

export interface Trace {
  /** A start-up step: prints "… what" now and " done (N ms)" when `run` settles. */
  progress<T>(what: string, run: () => Promise<T>): Promise<T>;
  /** A numbered story step heading. */
  step(title: string): void;
  /** An indented detail line under the current step. */
  detail(label: string, value?: unknown): void;
  /** A plain line. */
  line(text?: string): void;
  ok(text: string): void;
  fail(text: string): void;
}

export function createTrace(write: (text: string) => void = (t) => process.stdout.write(t), colour = process.stdout.isTTY === true): Trace {
  const paint = (code: number) => (text: string) => (colour ? `\x1b[${code}m${text}\x1b[0m` : text);
  const bold = paint(1);
  const dim = paint(2);
  const green = paint(32);
  const red = paint(31);
  const cyan = paint(36);
  let stepNo = 0;
  const show = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value));
  return {
    async progress(what, run) {
      const started = performance.now();
      write(`${dim('…')} ${what}`);
      try {
        const result = await run();
        write(` ${green('done')} ${dim(`(${Math.round(performance.now() - started)} ms)`)}\n`);
        return result;
      } catch (err) {
        write(` ${red('failed')}\n`);
        throw err;
      }
    },
    step(title) {
      stepNo += 1;
      write(`\n${bold(cyan(`${stepNo}.`))} ${bold(title)}\n`);
    },
    detail(label, value) {
      write(value === undefined ? `   ${label}\n` : `   ${dim(`${label}:`)} ${show(value)}\n`);
    },
    line(text = '') {
      write(`${text}\n`);
    },
    ok(text) {
      write(`   ${green('✔')} ${text}\n`);
    },
    fail(text) {
      write(`   ${red('✘')} ${text}\n`);
    },
  };
}
