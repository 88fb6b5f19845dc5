/** orval's fetch mutator: the generated functions call it with a path; it adds the base URL. */
let base = '';

export function setBaseUrl(url: string): void {
  base = url;
}

export async function svcFetch<T>(url: string, options: RequestInit): Promise<T> {
  const res = await fetch(`${base}${url}`, options);
  const text = await res.text();
  const data: unknown = text && (res.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : text;
  return { data, status: res.status, headers: res.headers } as T;
}
