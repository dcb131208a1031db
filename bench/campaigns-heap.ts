// The heap side of bench:campaigns' send (BENCH_HEAP_PROFILE=allocated|held): V8's sampling heap profiler over the
// send, its allocation sites summed by bytes. "allocated": every sampled allocation, garbage included (what churns the
// young generation); "promoted": what outlived the young generation (held at the end, or collected by a major GC
// only: the old generation's garbage, what makes the heap's part of a peak); "held": the sampled objects still in the heap, taken at each new RSS peak (the last is kept), so
// the sites of what the peak is made of, garbage not yet collected included. The profile is written beside the
// results (open it in Chrome's DevTools, Memory tab) and the top sites are printed.
import { mkdirSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { join } from "node:path";

interface SamplingNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: SamplingNode[];
}

export type HeapProfileMode = "allocated" | "held" | "promoted";

export interface HeapSampling {
  /** A new RSS peak: in "held" mode, what the heap holds now replaces the profile taken at the previous peak. */
  peaked(): void;
  /** Stops sampling; writes the profile to `directory` and answers the top `count` allocation sites by bytes. */
  stop(directory: string, count?: number): Promise<Array<{ site: string; MB: number }>>;
}

export async function startHeapSampling(mode: HeapProfileMode): Promise<HeapSampling> {
  const session = new Session();
  session.connect();
  await session.post("HeapProfiler.enable");
  const allocated = mode === "allocated";
  await session.post("HeapProfiler.startSampling", {
    samplingInterval: 64 * 1024,
    includeObjectsCollectedByMajorGC: allocated || mode === "promoted",
    includeObjectsCollectedByMinorGC: allocated,
  } as never);
  let atPeak: { head: SamplingNode } | undefined;
  let taking = false;
  return {
    peaked() {
      if (mode !== "held" || taking) return;
      taking = true;
      void session.post("HeapProfiler.getSamplingProfile").then(({ profile }) => {
        atPeak = profile as unknown as { head: SamplingNode };
        taking = false;
      });
    },
    async stop(directory, count = 15) {
      const { profile } = await session.post("HeapProfiler.stopSampling");
      const kept = mode !== "held" ? (profile as unknown as { head: SamplingNode }) : (atPeak ?? (profile as unknown as { head: SamplingNode }));
      session.disconnect();
      mkdirSync(directory, { recursive: true });
      writeFileSync(join(directory, `campaigns-${mode}.heapprofile`), JSON.stringify(kept));
      const bySite = new Map<string, number>();
      const visit = (node: SamplingNode) => {
        const { functionName, url, lineNumber } = node.callFrame;
        const site = `${functionName || "(anonymous)"} ${url.replace(/^.*\/(src|adapters|plugins|bench|node_modules)\//, "$1/")}:${lineNumber + 1}`;
        if (node.selfSize > 0) bySite.set(site, (bySite.get(site) ?? 0) + node.selfSize);
        for (const child of node.children) visit(child);
      };
      visit(kept.head);
      return [...bySite].sort((a, b) => b[1] - a[1]).slice(0, count).map(([site, bytes]) => ({ site, MB: Math.round((bytes / 1024 / 1024) * 10) / 10 }));
    },
  };
}
