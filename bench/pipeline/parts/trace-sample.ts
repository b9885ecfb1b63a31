/**
 * One trace of a service read back from the benchmark's Jaeger, as its span names in start order:
 * the report's proof that a mode's spans are the deployable's own, not just counted bytes.
 */
import type { Jaeger } from '@pda/dev-world/jaeger';

export async function traceSample(jaeger: Jaeger, service: string): Promise<string[]> {
  // Jaeger indexes a trace a moment after storing it: a few tries.
  for (let attempt = 0; attempt < 10; attempt++) {
    const [trace] = await jaeger.traces(service, undefined, 1);
    if (trace)
      return [...trace.spans].sort((a, b) => a.startTime - b.startTime).map((span) => span.operationName);
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
  return [];
}
