/**
 * The arguments svc's check of an MCP tool sends (src/net/check-request.ts checkToolArguments;
 * docs/SECURITY.md "Requests svc makes of sellers' hosts"): svc's own neutral value for each
 * required property, never a value the schema's author wrote.
 */
import { describe, expect, it } from 'vitest';
import { checkToolArguments } from '../../src/net/check-request.ts';

describe("an MCP check's arguments", () => {
  it('a required property given by a local $ref gets the neutral value of the schema it names; a cycle ends', () => {
    expect(
      checkToolArguments({
        type: 'object',
        $defs: {
          Address: { type: 'object', properties: { city: { type: 'string', minLength: 2 } }, required: ['city'] },
          Node: { $ref: '#/$defs/Node' },
        },
        properties: { to: { $ref: '#/$defs/Address' }, loop: { $ref: '#/$defs/Node' }, away: { $ref: 'https://example.com/s.json' } },
        required: ['to', 'loop', 'away'],
      }),
    ).toEqual({ to: { city: 'xx' }, loop: null, away: null });
  });

  it('each required property gets the neutral value of its type; an optional one is left out', () => {
    expect(
      checkToolArguments({
        type: 'object',
        properties: {
          to: { type: 'string' },
          amount: { type: 'number' },
          count: { type: 'integer' },
          confirm: { type: 'boolean' },
          ids: { type: 'array', items: { type: 'string' } },
          memo: { type: 'object', properties: { note: { type: 'string' }, tag: { type: 'string' } }, required: ['note'] },
          nothing: { type: 'null' },
          maybe: { type: ['string', 'null'] },
          anything: {},
          optional: { type: 'string' },
        },
        required: ['to', 'amount', 'count', 'confirm', 'ids', 'memo', 'nothing', 'maybe', 'anything', 'undeclared'],
      }),
    ).toEqual({
      to: '',
      amount: 0,
      count: 0,
      confirm: false,
      ids: [],
      memo: { note: '' },
      nothing: null,
      maybe: null,
      anything: null,
      undeclared: null,
    });
  });

  it("never a value the schema's author wrote: enum, const, default, examples and pattern stay unused", () => {
    const chosen = 'attacker-transfer';
    const args = checkToolArguments({
      type: 'object',
      properties: {
        action: { type: 'string', enum: [chosen], default: chosen, examples: [chosen] },
        fixed: { type: 'string', const: chosen },
        shaped: { type: 'string', pattern: `^${chosen}$`, format: 'email' },
        amount: { type: 'number', enum: [777777], default: 777777, examples: [777777] },
      },
      required: ['action', 'fixed', 'shaped', 'amount'],
      default: { action: chosen },
      examples: [{ action: chosen }],
    });
    expect(args).toEqual({ action: '', fixed: '', shaped: '', amount: 0 });
    expect(JSON.stringify(args)).not.toMatch(/attacker|777777/);
  });

  it('only the bounds move a value: the bound nearest 0, the shortest string or array allowed', () => {
    const one = (schema: Record<string, unknown>) => checkToolArguments({ type: 'object', properties: { v: schema }, required: ['v'] }).v;
    expect(one({ type: 'number', minimum: 5, maximum: 10 })).toBe(5);
    expect(one({ type: 'integer', minimum: 2.5 })).toBe(3);
    expect(one({ type: 'integer', exclusiveMinimum: 0 })).toBe(1);
    expect(one({ type: 'number', exclusiveMinimum: 0, maximum: 0.5 })).toBe(0.25);
    expect(one({ type: 'number', maximum: -3 })).toBe(-3);
    expect(one({ type: 'integer', exclusiveMaximum: -3 })).toBe(-4);
    expect(one({ type: 'number', minimum: -1, maximum: 1 })).toBe(0);
    expect(one({ type: 'string', minLength: 3 })).toBe('xxx');
    expect(one({ type: 'string', minLength: 100_000 })).toBe(''); // beyond svc's filler bound: fails validation
    expect(one({ type: 'array', minItems: 2, items: { type: 'integer', minimum: 1 } })).toEqual([1, 1]);
    expect(one({ properties: { a: { type: 'boolean' } }, required: ['a'] })).toEqual({ a: false });
  });

  it('bounded: nesting stops at depth 8, at most 256 values, and "__proto__" is an ordinary key', () => {
    let deep: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 20; i++) deep = { type: 'object', properties: { d: deep }, required: ['d'] };
    expect(JSON.stringify(checkToolArguments(deep))).toBe(`${'{"d":'.repeat(8)}{}${'}'.repeat(8)}`);

    const names = Array.from({ length: 64 }, (_, i) => `p${i}`);
    const wide = (depth: number): Record<string, unknown> =>
      depth === 0
        ? { type: 'string' }
        : { type: 'object', properties: Object.fromEntries(names.map((n) => [n, wide(depth - 1)])), required: names };
    const values = JSON.stringify(checkToolArguments(wide(3))).match(/""/g)?.length ?? 0;
    expect(values).toBeGreaterThan(0);
    expect(values).toBeLessThanOrEqual(256);

    const proto = checkToolArguments({ type: 'object', properties: { ['__proto__']: { type: 'string' } }, required: ['__proto__'] });
    expect(Object.getPrototypeOf(proto)).toBe(Object.prototype);
    expect(JSON.stringify(proto)).toBe('{"__proto__":""}');
  });

  it('a schema that is not an object schema gives {}', () => {
    for (const schema of [undefined, null, 'x', [], { type: 'object' }, { required: 'to' }]) expect(checkToolArguments(schema)).toEqual({});
  });
});
