import { CliUsageError, companyOption, formatFields, formatTable, requiredOption, type CliCommand, type CliContext } from "../../src/index.ts";
import type { CatalogApi } from "./catalog-api.ts";
import { errorTotal } from "./catalog-uploads.ts";
import { catalogUploadCommand } from "./upload-command.ts";

async function catalogOf(context: CliContext): Promise<CatalogApi> {
  return (await context.openKit()).plugin("catalog");
}

export const catalogCommands: readonly CliCommand[] = [
  catalogUploadCommand,
  {
    name: "catalog uploads list",
    summary: "List a company's recent catalog uploads, oldest first",
    options: companyOption,
    async run(values, context) {
      const uploads = await (await catalogOf(context)).listUploads(requiredOption(values, "company"));
      const rows = uploads.map((upload) => ({
        uploadId: upload.uploadId,
        status: upload.status,
        validateOnly: String(upload.validateOnly),
        received: upload.productsReceived,
        processed: upload.productsProcessed,
        errors: errorTotal(upload.errorCounts),
        lastUpdated: upload.lastUpdated,
      }));
      return { json: uploads, text: formatTable(rows) };
    },
  },
  {
    name: "catalog uploads show",
    summary: "Show one catalog upload with its errors and the exact count of each error type",
    options: { ...companyOption, id: { type: "string", description: "Upload id", required: true, placeholder: "ID" } },
    async run(values, context) {
      const upload = await (await catalogOf(context)).getUpload(requiredOption(values, "company"), requiredOption(values, "id"));
      if (!upload) throw new CliUsageError(`no catalog upload ${String(values.id)} for this company`);
      const { errors, ...fields } = upload;
      const list = errors.map((error) => `  line ${error.lineNum}  ${error.errorType}  ${error.errorMessage}`).join("\n");
      return { json: upload, text: `${formatFields(fields)}\nerrors:${list ? `\n${list}` : " (none)"}` };
    },
  },
  {
    name: "catalog products show",
    summary: "Show a product of a company's catalog, with its variants, as JSON",
    options: { ...companyOption, id: { type: "string", description: "Product id", required: true, placeholder: "ID" } },
    async run(values, context) {
      const product = await (await catalogOf(context)).getProduct(requiredOption(values, "company"), requiredOption(values, "id"));
      if (!product) throw new CliUsageError(`no product ${String(values.id)} in this company's catalog`);
      return { json: product, text: JSON.stringify(product, null, 2) };
    },
  },
];
