/** µs since the epoch → ISO 8601 UTC with microseconds, like every timestamp of the contract. */
export function isoMicros(us: number): string {
  const ms = Math.floor(us / 1000);
  return `${new Date(ms).toISOString().slice(0, 23)}${String(us - ms * 1000).padStart(3, '0')}Z`;
}
