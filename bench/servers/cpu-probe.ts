// Imported by every bench server: on SIGUSR2 it prints its CPU time so far, so the
// harness can compute CPU microseconds per request, a figure that survives a busy machine;
// then its memory (`MEM {"rss":…,"heapUsed":…}`), which benchmarks of memory read.
process.on("SIGUSR2", () => {
  const usage = process.cpuUsage();
  console.log(`CPU ${usage.user + usage.system}`);
  const { rss, heapUsed } = process.memoryUsage();
  console.log(`MEM ${JSON.stringify({ rss, heapUsed })}`);
});
