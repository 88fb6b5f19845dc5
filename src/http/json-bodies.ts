/**
 * JSON bodies serialized as a handler sets them. Koa's `body` setter tells a body's kind by
 * testing it against the Fetch API's `Response` class (among others) before it settles on JSON,
 * and the first read of the global `Response` loads Node's whole fetch implementation: about
 * 0.1 CPU-s, paid by svc's first answer, `/ready`'s included (docs/OPERATIONS.md "Startup"). A
 * plain object or array is JSON whatever the tests would say, so it is handed to Koa as the string
 * Koa would have written, with the JSON content type Koa would have set: the same bytes and
 * headers on the wire.
 */
import type Koa from 'koa';

/** An object literal or array: what svc's handlers answer, and never a stream, Blob or Response. */
function isPlainJson(value: unknown): value is object {
  if (Array.isArray(value)) return true;
  if (typeof value !== 'object' || value === null) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/** Serializes plain JSON bodies set on `app`'s responses (Koa's own path for every other kind). */
export function serializeJsonBodies<State>(app: Koa<State>): void {
  let owner: object | null = app.response;
  let body: PropertyDescriptor | undefined;
  while (owner && !(body = Object.getOwnPropertyDescriptor(owner, 'body'))) owner = Object.getPrototypeOf(owner) as object | null;
  if (!body?.get || !body.set) throw new Error("Koa's response no longer has a body accessor");
  const koa = body;
  Object.defineProperty(app.response, 'body', {
    configurable: true,
    enumerable: koa.enumerable ?? false,
    get(this: Koa.Response): unknown {
      return koa.get!.call(this);
    },
    set(this: Koa.Response, value: unknown) {
      if (!isPlainJson(value)) return void koa.set!.call(this, value);
      // Koa's own rule for a JSON body: keep a JSON type the handler chose (problem+json), else json.
      if (!/\bjson\b/i.test(this.type)) this.type = 'json';
      koa.set!.call(this, JSON.stringify(value));
    },
  });
}
