/**
 * Lets the event loop turn until `done()` holds, for work that runs on its own (a job on the real
 * scheduler); gives up after `timeoutMs` of wall-clock time, so a busy machine slows a test down
 * rather than failing it, and a broken one fails instead of spinning for ever.
 */
export async function waitUntil(what: string, done: () => Promise<boolean> | boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`still waiting after ${timeoutMs} ms for ${what}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}
