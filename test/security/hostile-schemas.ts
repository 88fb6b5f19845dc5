/**
 * Seller schemas that pass the static caps (size, depth, costly keywords, references) but are slow
 * to run; shared by the schema tests. Each fits the 64 KiB extensions cap with its `info`.
 */
const info = { input: { type: 'http', method: 'GET' } };

/**
 * Hostile schemas that pass the static caps (size, depth, costly keywords) but are slow to run.
 * `variant` makes them distinct (a `$comment`), so the validator's memory of recent verdicts does
 * not answer for them and each one runs on a thread.
 */
export function slowSchemas(variant?: string): Array<{ name: string; schema: Record<string, unknown>; info: unknown }> {
  // uniqueItems over arrays is a deep-equality comparison of every pair: ~2.5·10^7 comparisons.
  const pairs = Array.from({ length: 7_000 }, (_, i) => [i]);
  // anyOf whose first branch fails only at the bottom, recursing through `properties` 60 levels deep: 2^60 paths.
  let nested: Record<string, unknown> = { z: 1 };
  for (let i = 0; i < 60; i++) nested = { a: nested };
  const comment = variant === undefined ? {} : { $comment: variant };
  return [
    {
      name: 'uniqueItems over 7 000 arrays',
      schema: { ...comment, properties: { list: { type: 'array', uniqueItems: true } } },
      info: { ...info, list: pairs },
    },
    {
      name: 'exponential anyOf through a recursive $ref',
      schema: {
        ...comment,
        $defs: {
          n: { anyOf: [{ allOf: [{ properties: { a: { $ref: '#/$defs/n' } } }, false] }, { properties: { a: { $ref: '#/$defs/n' } } }] },
        },
        properties: { deep: { $ref: '#/$defs/n' } },
      },
      info: { ...info, deep: nested },
    },
  ];
}
