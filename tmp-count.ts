import { startTestKit } from "./test/support/test-kit.ts";
import pg from "pg";
async function main() {
  const t0 = await startTestKit();
  let n = 0; const seen = new Map<string, number>();
  const origPool = pg.Pool.prototype.query; const origClient = pg.Client.prototype.query;
  (pg.Pool.prototype as any).query = function (...a: any[]) { n++; const k = String(a[0]).slice(0, 90); seen.set(k, (seen.get(k) ?? 0) + 1); return origPool.apply(this, a as any); };
  (pg.Client.prototype as any).query = function (...a: any[]) { n++; const k = "C " + String(a[0]).slice(0, 90); seen.set(k, (seen.get(k) ?? 0) + 1); return origClient.apply(this, a as any); };
  const t = performance.now();
  for (let i = 0; i < 10; i++) {
    const r = await t0.request({ method: "POST", url: "/v1/subscriptions", body: { user: { phone: `+1914844${String(i).padStart(4, "0")}` }, locale: { language: "en", country: "US" }, subscriptionType: "MARKETING" } });
    if (r.status !== 202) console.log(r.status, r.body);
  }
  console.log("10 opt-ins", Math.round(performance.now() - t), "ms", "queries", n);
  console.log([...seen].sort((a, b) => b[1] - a[1]).slice(0, 25));
  await t0.stop();
  process.exit(0);
}
void main();
