/** SIGTERM and SIGINT close gracefully, then exit. */
export function closeOnSignals(close: () => Promise<void>): void {
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    process.once(signal, () => {
      close().then(
        () => process.exit(0),
        () => process.exit(1),
      );
    });
  }
}
