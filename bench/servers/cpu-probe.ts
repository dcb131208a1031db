// Imported by every bench server: on SIGUSR2 it prints its CPU time so far, so the
// harness can compute CPU microseconds per request, a figure that survives a busy machine.
process.on("SIGUSR2", () => {
  const usage = process.cpuUsage();
  console.log(`CPU ${usage.user + usage.system}`);
});
