import { CliUsageError, companyOption, formatFields, formatTable, HttpError, requiredOption, stringOption, type CliCommand } from "../../src/index.ts";
import type { PrivacyRequest } from "./records.ts";
import { fetchedView } from "./wire.ts";

/** The fetch view with its times as the CLI prints every time (ISO 8601, UTC); the API keeps the interface's `+0000` form. */
function cliView(request: PrivacyRequest): Record<string, unknown> {
  const iso = (at: number) => new Date(at).toISOString();
  return {
    ...fetchedView(request),
    requestDateTime: iso(request.requestedAt),
    ...(request.processingStartedAt !== undefined ? { processingStartDateTime: iso(request.processingStartedAt) } : {}),
    ...(request.processingEndedAt !== undefined ? { processingEndDateTime: iso(request.processingEndedAt) } : {}),
  };
}

export const privacyCommands: readonly CliCommand[] = [
  {
    name: "privacy-requests create",
    summary: "Ask for a subject's data at a company to be deleted (processed by the server's job runner)",
    options: {
      ...companyOption,
      phone: { type: "string", description: "The subject's phone", placeholder: "PHONE" },
      email: { type: "string", description: "The subject's email", placeholder: "EMAIL" },
      message: { type: "string", description: "Audit message", placeholder: "TEXT" },
    },
    async run(values, context) {
      const kit = await context.openKit();
      const companyId = requiredOption(values, "company");
      if (!(await kit.plugin("accounts").getCompany(companyId))) throw new CliUsageError(`no company ${companyId}`);
      try {
        const request = await kit.plugin("privacy").create(companyId, {
          subjectPhone: stringOption(values, "phone"),
          subjectEmail: stringOption(values, "email"),
          requestMsg: stringOption(values, "message"),
        });
        const view = cliView(request);
        return { json: view, text: formatFields(view) };
      } catch (error) {
        if (error instanceof HttpError) throw new CliUsageError(error.details.map((detail) => `${detail.path} ${detail.message}`).join("; ") || error.message);
        throw error;
      }
    },
  },
  {
    name: "privacy-requests list",
    summary: "A company's privacy requests, the subject masked, with their processing times",
    options: companyOption,
    async run(values, context) {
      const kit = await context.openKit();
      const views = (await kit.plugin("privacy").list(requiredOption(values, "company"))).map(cliView);
      return {
        json: views,
        text: formatTable(
          views.map((view) => ({
            id: String(view.id),
            processed: String(view.processed),
            phone: String(view.subjectPhone ?? ""),
            email: String(view.subjectEmail ?? ""),
            requested: String(view.requestDateTime),
            processedAt: String(view.processingEndDateTime ?? ""),
          })),
        ),
      };
    },
  },
];
