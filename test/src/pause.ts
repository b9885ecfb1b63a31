/**
 * Resolves after `ms` milliseconds: for letting time pass (a fault held, a writer running on), not
 * for waiting until something holds (waitFor of stack-env.ts polls a condition).
 */
export const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
