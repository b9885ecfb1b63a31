// Worker-thread entry: a thread does not inherit the tsx loader of the process that runs the
// TypeScript sources (`tsx src/main.ts`, vitest), so it registers tsx itself, then loads the entry.
import { register } from 'tsx/esm/api';

register();
await import('./apply-thread-entry.ts');
