// The GET /v1/me benchmarks' servers and data, shared by bench/http.ts and bench/http-adapters.ts.
import { join } from "node:path";
import { createServerKit } from "../server/server-kit.ts";
import { silentLogger } from "../src/index.ts";
import { temporaryDirectory } from "../test/support/temp-dir.ts";

/** Both take BENCH_FRAMEWORK (node, express or fastify; default node). */
export const ME_SERVERS = {
  bare: join(import.meta.dirname, "servers/bare-server.ts"),
  reachkit: join(import.meta.dirname, "servers/reachkit-server.ts"),
};

/**
 * A self-hosted data directory with one company, for servers started in other
 * processes: the environment they need and the bearer header of its API key.
 */
export async function prepareMeData(): Promise<{ env: Record<string, string>; headers: Record<string, string> }> {
  const dataDir = temporaryDirectory("bench-http");
  const secret = "bench-secret-bench-secret-bench-secret-0";
  const setup = createServerKit({ dataDir, publicUrl: "http://localhost", secret, logger: silentLogger() });
  await setup.start({ runJobs: false });
  const { output } = await setup.provisionCompany({ name: "Bench Co" });
  await setup.stop();
  return { env: { BENCH_DATA_DIR: dataDir, BENCH_SECRET: secret }, headers: { authorization: `Bearer ${output.apiKey as string}` } };
}
