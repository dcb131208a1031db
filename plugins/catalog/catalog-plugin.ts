import type { JobContext } from "../../src/jobs/job-runner.ts";
import { definePlugin } from "../../src/kernel/plugin.ts";
import { METRICS } from "../../src/metrics/metrics.ts";
import { defineToken } from "../../src/kernel/token.ts";
import { OBJECT_STORAGE } from "../../src/ports/object-storage.ts";
import { catalogApi, type CatalogApi } from "./catalog-api.ts";
import { CatalogStore } from "./catalog-store.ts";
import { CatalogUploads, EXPIRE_UPLOAD_JOB, POLL_UPLOAD_JOB, PROCESS_UPLOAD_JOB } from "./catalog-uploads.ts";
import { catalogCommands } from "./commands.ts";
import { productRowsHoldProducts } from "./migrations.ts";
import { catalogCollections } from "./records.ts";
import { catalogRoutes } from "./routes.ts";
import { resolveCatalogSettings, type CatalogOptions } from "./settings.ts";
import { UploadProcessor } from "./upload-processor.ts";

declare module "../../src/kernel/plugin.ts" {
  interface PluginApis {
    catalog: CatalogApi;
  }
}

const PROVIDER = ["reachkit/plugins/catalog (catalogPlugin)"];
const CATALOG_STORE = defineToken<CatalogStore>("CatalogStore", PROVIDER);
const CATALOG_UPLOADS = defineToken<CatalogUploads>("CatalogUploads", PROVIDER);
const CATALOG_UPLOAD_PROCESSOR = defineToken<UploadProcessor>("CatalogUploadProcessor", PROVIDER);

/**
 * Product catalog uploads (interface §4.13): pre-signed uploads of ndjson
 * files, streamed validation, all-or-nothing saves, and the journey events
 * a save causes (back in stock, low inventory, price dropped).
 */
export function catalogPlugin(options: CatalogOptions = {}) {
  const settings = resolveCatalogSettings(options);
  let stopListening: (() => void) | undefined;
  return definePlugin({
    name: "catalog",
    requires: [OBJECT_STORAGE],
    collections: catalogCollections,
    commands: catalogCommands,
    migrations: [productRowsHoldProducts],
    register({ container, storage, clock, jobs, events, logger }) {
      container.bind(CATALOG_STORE, { useFactory: () => new CatalogStore(storage, clock) });
      container.bind(CATALOG_UPLOADS, { useFactory: (c) => new CatalogUploads(storage, clock, jobs, c.resolve(OBJECT_STORAGE), settings) });
      container.bind(CATALOG_UPLOAD_PROCESSOR, {
        useFactory: (c) =>
          new UploadProcessor(storage, clock, jobs, c.resolve(OBJECT_STORAGE), events, c.resolve(CATALOG_UPLOADS), c.resolve(CATALOG_STORE), settings, logger),
      });
    },
    routes: ({ resolve }) => catalogRoutes(resolve(CATALOG_UPLOADS)),
    jobs: ({ resolve }) => {
      const linesProcessed = resolve(METRICS).counter({ name: "reachkit_catalog_lines_processed_total", help: "Catalog lines checked by uploads that ended (blank lines not counted)" });
      return {
        async [PROCESS_UPLOAD_JOB](payload: { uploadId: string }, context: JobContext) {
          const outcome = await resolve(CATALOG_UPLOAD_PROCESSOR).process(payload, context);
          if (outcome && "lines" in outcome) linesProcessed.inc(outcome.lines);
          return outcome;
        },
        [EXPIRE_UPLOAD_JOB]: (payload: { uploadId: string }) => resolve(CATALOG_UPLOADS).expire(payload),
        [POLL_UPLOAD_JOB]: (payload: { uploadId: string }) => resolve(CATALOG_UPLOADS).poll(payload),
      };
    },
    api: ({ resolve, events }) => catalogApi(resolve(CATALOG_STORE), resolve(CATALOG_UPLOADS), events),
    async start({ resolve }) {
      const uploads = resolve(CATALOG_UPLOADS);
      stopListening = resolve(OBJECT_STORAGE).onUploaded((object) => uploads.receive(object));
    },
    async stop() {
      stopListening?.();
    },
  });
}
