import { testApp } from '@pda/api/testing';
import { freePort } from '@pda/projections/testing';

/**
 * The real api (built by @pda/api/testing on projection files made through the ingest path)
 * listening on a free loopback port, for the client to reach over HTTP. `publicBaseUrl` is where
 * `links.*` point (a proxy in front of it, say); by default the api itself.
 */
export interface RunningApi {
  readonly baseUrl: string;
  readonly port: number;
  close(): Promise<void>;
}

export async function startApi(
  dataDir: string,
  options: { env?: Record<string, string>; port?: number; publicBaseUrl?: string } = {},
): Promise<RunningApi> {
  const port = options.port ?? (await freePort());
  const baseUrl = `http://127.0.0.1:${port}`;
  const app = await testApp(dataDir, {
    env: { API_PUBLIC_BASE_URL: options.publicBaseUrl ?? baseUrl, ...options.env },
  });
  await app.listen({ host: '127.0.0.1', port });
  return { baseUrl, port, close: () => app.close() };
}
