/** Microseconds since the epoch. Injected so tests can drive the change time. */
export type ClockUs = () => number;

/**
 * Wall-clock microseconds: partners compare filter[updated_since] with their own clock, so the
 * change time follows the wall clock (ms resolution; the +1 rule keeps it strictly increasing).
 */
export const wallClockUs: ClockUs = () => Date.now() * 1000;
