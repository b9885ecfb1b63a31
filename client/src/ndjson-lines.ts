/**
 * The lines of an NDJSON body as they arrive, each parsed: a line is yielded once its line break
 * has come, so a body cut mid-line never yields the part it got; one that ends without its last
 * line break (the api ends every line with one) throws, as a cut connection does. Leaving early
 * (return, break, a throw) cancels the body, which closes the connection.
 */
export async function* ndjsonLines(body: ReadableStream<Uint8Array>): AsyncGenerator<unknown> {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = '';
  let finished = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buffered += value;
      let end = buffered.indexOf('\n');
      while (end !== -1) {
        const line = buffered.slice(0, end);
        buffered = buffered.slice(end + 1);
        if (line.trim() !== '') yield JSON.parse(line);
        end = buffered.indexOf('\n');
      }
    }
    finished = true;
    if (buffered.trim() !== '') throw new Error('the stream ended in the middle of a line');
  } finally {
    if (!finished) await reader.cancel().catch(() => undefined);
  }
}
