/**
 * Reaches a deep page of GET /v1/sites the way a client does: by following `links.next`. Pages of
 * 200 (the maximum) up to the row before the target page, then one page sized to land exactly on
 * it (`limit` may change between pages; the cursor keeps the position). Returns the target page's
 * URL with the benchmark's limit, its body and its ids.
 */

export interface Walk {
  readonly url: string;
  readonly body: string;
  readonly ids: readonly string[];
  readonly requests: number;
  readonly seconds: number;
}

interface ListBody {
  data: { id: string }[];
  links: { next: string | null };
}

export async function walkToPage(
  base: string,
  headers: Record<string, string>,
  page: number,
  limit: number,
): Promise<Walk> {
  const started = performance.now();
  let remaining = (page - 1) * limit;
  let url = `${base}/v1/sites?limit=${limit}`;
  let requests = 0;
  while (remaining > 0) {
    const step = Math.min(200, remaining);
    const next = new URL(url);
    next.searchParams.set('limit', String(step));
    const response = await fetch(next, { headers });
    if (response.status !== 200) throw new Error(`walk: ${next} answered ${response.status}`);
    const body = (await response.json()) as ListBody;
    requests += 1;
    if (body.data.length !== step || body.links.next === null) throw new Error(`walk: short page at ${next}`);
    remaining -= step;
    url = body.links.next;
  }
  const target = new URL(url);
  target.searchParams.set('limit', String(limit));
  const response = await fetch(target, { headers });
  const body = await response.text();
  const ids = (JSON.parse(body) as ListBody).data.map((row) => row.id);
  if (response.status !== 200 || ids.length !== limit)
    throw new Error(`walk: target page ${target} is not full`);
  return {
    url: target.toString(),
    body,
    ids,
    requests: requests + 1,
    seconds: Math.round((performance.now() - started) / 100) / 10,
  };
}
