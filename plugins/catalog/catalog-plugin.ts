import { definePlugin, EVENTS, METRICS, OBJECT_STORAGE, type JobContext } from "../../src/index.ts";
import { catalogApi, type CatalogApi } from "./catalog-api.ts";
import { CatalogStore } from "./catalog-store.ts";
import { CatalogUploads, EXPIRE_UPLOAD_JOB, POLL_UPLOAD_JOB, PROCESS_UPLOAD_JOB } from "./catalog-uploads.ts";
import { catalogCommands } from "./commands.ts";
import { productRowsHoldProducts } from "./migrations.ts";
import { catalogCollections } from "./records.ts";
import { catalogRoutes } from "./routes.ts";
import { resolveCatalogSettings, type CatalogOptions } from "./settings.ts";
import { CATALOG_API, CATALOG_SETTINGS, CATALOG_STORE, CATALOG_UPLOAD_PROCESSOR, CATALOG_UPLOADS } from "./tokens.ts";
import { UploadProcessor } from "./upload-processor.ts";

declare module "../../src/kernel/plugin.ts" {
  interface PluginApis {
    catalog: CatalogApi;
  }
}

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
    register({ container }) {
      container.bind(CATALOG_SETTINGS, { useValue: settings });
      container.bind(CATALOG_STORE, { useClass: CatalogStore });
      container.bind(CATALOG_UPLOADS, { useClass: CatalogUploads });
      container.bind(CATALOG_UPLOAD_PROCESSOR, { useClass: UploadProcessor });
      container.bind(CATALOG_API, { useFactory: (c) => catalogApi(c.resolve(CATALOG_STORE), c.resolve(CATALOG_UPLOADS), c.resolve(EVENTS)) });
    },
    routes: ({ resolve }) => catalogRoutes(resolve(CATALOG_UPLOADS)),
    jobs: ({ resolve }) => {
      const processor = resolve(CATALOG_UPLOAD_PROCESSOR);
      const uploads = resolve(CATALOG_UPLOADS);
      const linesProcessed = resolve(METRICS).counter({ name: "reachkit_catalog_lines_processed_total", help: "Catalog lines checked by uploads that ended (blank lines not counted)" });
      return {
        async [PROCESS_UPLOAD_JOB](payload: { uploadId: string }, context: JobContext) {
          const outcome = await processor.process(payload, context);
          if (outcome && "lines" in outcome) linesProcessed.inc(outcome.lines);
          return outcome;
        },
        [EXPIRE_UPLOAD_JOB]: (payload: { uploadId: string }) => uploads.expire(payload),
        [POLL_UPLOAD_JOB]: (payload: { uploadId: string }) => uploads.poll(payload),
      };
    },
    api: ({ resolve }) => resolve(CATALOG_API),
    async start({ resolve }) {
      const uploads = resolve(CATALOG_UPLOADS);
      stopListening = resolve(OBJECT_STORAGE).onUploaded((object) => uploads.receive(object));
    },
    async stop() {
      stopListening?.();
    },
  });
}
