/**
 * The HTTP half of bench/api/since.ts: GET /v1/sites pages of 50 with and without
 * filter[updated_since], one request at a time (median ms), from an api process; deep pages are
 * reached the way a client reaches them, by following links.next.
 */

export interface HttpRow {
  readonly api: string;
  /** The input file (api/parts/since-fixture.ts): shuffled or clustered change times. */
  readonly file: string;
  readonly sort: string;
  /** Sites matching the since; undefined for the unfiltered page. */
  readonly matching: number | undefined;
  /** The count the since was chosen for (a clustered since may match a few rows fewer: api/since.ts). */
  readonly asked: number | undefined;
  readonly page: 'first' | 'deep';
  readonly rows: number;
  /** Fewer rows than the limit while links.next is set: the page stopped at its budget. */
  readonly short: boolean;
  readonly medianMs: number;
  readonly requests: number;
  /** The same api's unfiltered page of the same sort and depth, measured interleaved with it. */
  readonly peerMs: number | undefined;
}

interface ListBody {
  data: { id: string }[];
  links: { next: string | null };
}

/** The URL of the page that starts `skip` rows after the first row of `url`'s walk (limit 50). */
export async function deepUrl(url: string, headers: Record<string, string>, skip: number): Promise<string> {
  let next = url;
  let remaining = skip;
  while (remaining > 0) {
    const step = new URL(next);
    step.searchParams.set('limit', String(Math.min(200, remaining)));
    const response = await fetch(step, { headers });
    if (response.status !== 200)
      throw new Error(`${step} answered ${response.status}: ${await response.text()}`);
    const body = (await response.json()) as ListBody;
    if (body.links.next === null) throw new Error(`${step}: the walk ended ${remaining} rows early`);
    remaining -= body.data.length;
    next = body.links.next;
  }
  const target = new URL(next);
  target.searchParams.set('limit', '50');
  return target.toString();
}

/**
 * Sequential GETs of each of `urls`, interleaved (one of each per round, so a change of the
 * machine's load hits them alike): median ms per URL after one warm-up; a URL slower than 250 ms
 * gets 2 more requests, the others at least 5 and then rounds for up to `budgetMs` of their time.
 */
export async function sequential(
  urls: readonly string[],
  headers: Record<string, string>,
  budgetMs: number,
): Promise<{ medianMs: number; requests: number; rows: number; short: boolean }[]> {
  const get = async (url: string) => {
    const response = await fetch(url, { headers });
    const text = await response.text();
    if (response.status !== 200) throw new Error(`${url} answered ${response.status}: ${text.slice(0, 300)}`);
    const body = JSON.parse(text) as ListBody;
    const limit = Number(new URL(url).searchParams.get('limit'));
    return { rows: body.data.length, short: body.data.length < limit && body.links.next !== null };
  };
  const rows: { rows: number; short: boolean }[] = [];
  const slow: boolean[] = [];
  for (const url of urls) {
    const at = performance.now();
    rows.push(await get(url));
    slow.push(performance.now() - at > 250);
  }
  const times = urls.map((): number[] => []);
  let spent = 0;
  for (let round = 0; ; round++) {
    const fastDone = round >= 5 && (round >= 300 || spent >= budgetMs);
    if (fastDone && round >= 2) break;
    for (const [index, url] of urls.entries()) {
      if (slow[index] ? round >= 2 : fastDone) continue;
      const at = performance.now();
      await get(url);
      const took = performance.now() - at;
      times[index]!.push(took);
      if (!slow[index]) spent += took;
    }
  }
  return times.map((list, index) => {
    list.sort((a, b) => a - b);
    return {
      medianMs: Math.round(list[Math.floor(list.length / 2)]! * 100) / 100,
      requests: list.length,
      ...rows[index]!,
    };
  });
}
