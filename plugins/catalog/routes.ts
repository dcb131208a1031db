import * as v from "valibot";
import { defineRoute, jsonBody, notFound, plainObject, reply, type AnyRoute } from "../../src/index.ts";
import { uploadView, type CatalogUploads } from "./catalog-uploads.ts";
import { createUploadDocs, getUploadDocs, listUploadsDocs } from "./openapi.ts";

/** The body is optional: no body is `{}`, and validateOnly defaults to false. */
const createBody = v.optional(plainObject({ validateOnly: v.optional(v.boolean("must be true or false")) }), {});

/** The catalog upload endpoints of interface §4.13. */
export function catalogRoutes(uploads: CatalogUploads): AnyRoute[] {
  return [
    defineRoute({
      method: "POST",
      path: "/v1/product-catalog/uploads",
      auth: { kind: "api", anyOfScopes: ["product_catalogs:write"] },
      rateLimit: "catalog-upload",
      body: jsonBody(createBody),
      summary: "Create a catalog upload",
      docs: createUploadDocs,
      async handler({ principal, body }) {
        return reply.json(200, uploadView(await uploads.create(principal.companyId, { validateOnly: body.validateOnly })));
      },
    }),
    defineRoute({
      method: "GET",
      path: "/v1/product-catalog/uploads",
      auth: { kind: "api", anyOfScopes: ["product_catalogs:read"] },
      summary: "List catalog uploads",
      docs: listUploadsDocs,
      async handler({ principal }) {
        return reply.json(200, (await uploads.list(principal.companyId)).map(uploadView));
      },
    }),
    defineRoute({
      method: "GET",
      path: "/v1/product-catalog/uploads/:uploadId",
      auth: { kind: "api", anyOfScopes: ["product_catalogs:read"] },
      summary: "Get a catalog upload",
      docs: getUploadDocs,
      async handler({ principal, params }) {
        const upload = await uploads.get(principal.companyId, params.uploadId ?? "");
        if (!upload) throw notFound("no catalog upload with this id");
        return reply.json(200, uploadView(upload));
      },
    }),
  ];
}
