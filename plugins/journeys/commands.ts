import { readFile } from "node:fs/promises";
import { CliUsageError, companyOption, formatFields, formatTable, openCompanyKit, refusalsAsUsageErrors, requiredOption, stringOption, type CliCommand, type Reachkit } from "../../src/index.ts";
import { TRIGGERS, type TriggerType } from "./definition.ts";
import { journeyView } from "./journey-definitions.ts";
import type { JourneyStats } from "./journey-log.ts";
import type { JourneyRecord } from "./records.ts";

const journeyArgument = [{ name: "journey", description: "The journey's id" }];

const row = (journey: JourneyRecord) => ({
  id: journey.id,
  name: journey.name,
  trigger: journey.trigger.type,
  status: journey.status,
  steps: journey.steps.map((step) => (step.type === "wait" ? `wait ${step.duration}` : step.type)).join(", "),
});

const shown = (journey: JourneyRecord) => ({ json: journeyView(journey), text: formatFields({ ...row(journey), window: journey.window, texts: journey.steps.flatMap((step) => ("text" in step ? [step.text] : [])) }) });

function statsText(stats: JourneyStats): string {
  const reasons = (counts: Record<string, number>) => Object.entries(counts).filter(([, count]) => count > 0).map(([reason, count]) => `${reason} ${count}`).join(", ") || "none";
  return formatFields({
    entered: stats.entered,
    sent: stats.sent,
    deferredForQuietHours: stats.deferredForQuietHours,
    skipped: reasons(stats.skipped),
    exited: reasons(stats.exited),
    purchasesWithin7Days: stats.purchases,
    revenue: Object.entries(stats.revenue).map(([currency, total]) => `${total.toFixed(2)} ${currency}`).join(", ") || "0",
  });
}

const onJourney = (name: string, summary: string, act: (kit: Reachkit, companyId: string, id: string) => Promise<JourneyRecord | undefined>): CliCommand => ({
  name,
  summary,
  options: { ...companyOption },
  arguments: journeyArgument,
  async run(values, context) {
    const { kit, companyId } = await openCompanyKit(values, context);
    const journey = await act(kit, companyId, requiredOption(values, "journey"));
    if (!journey) throw new CliUsageError(`no journey ${String(values.journey)} at company ${companyId}`);
    return shown(journey);
  },
});

export const journeysCommands: readonly CliCommand[] = [
  {
    name: "journeys templates",
    summary: "The ready journeys that `journeys install` installs",
    async run(_values, context) {
      const templates = (await context.openKit()).plugin("journeys").templates();
      const rows = TRIGGERS.map((name) => ({ template: name, steps: templates[name].steps.map((step) => (step.type === "wait" ? `wait ${step.duration}` : `${step.type}: ${"text" in step ? step.text : ""}`)).join(" | ") }));
      return { json: templates, text: formatTable(rows) };
    },
  },
  {
    name: "journeys install",
    summary: "Installs a ready journey for a company (see `journeys templates`)",
    options: {
      ...companyOption,
      template: { type: "string", description: `One of ${TRIGGERS.join(", ")}`, required: true, placeholder: "NAME" },
      name: { type: "string", description: "The journey's name (default: the template's)", placeholder: "TEXT" },
      paused: { type: "boolean", description: "Install it paused" },
    },
    async run(values, context) {
      const template = requiredOption(values, "template");
      if (!(TRIGGERS as readonly string[]).includes(template)) throw new CliUsageError(`--template must be one of ${TRIGGERS.join(", ")}`);
      const { kit, companyId } = await openCompanyKit(values, context);
      const name = stringOption(values, "name");
      const journey = await refusalsAsUsageErrors(() =>
        kit.plugin("journeys").create(companyId, { template: template as TriggerType, ...(name !== undefined ? { name } : {}), ...(values.paused === true ? { status: "paused" } : {}) }),
      );
      return shown(journey);
    },
  },
  {
    name: "journeys create",
    summary: "Creates a journey from a JSON definition (the body of POST /v1/journeys)",
    options: { ...companyOption, file: { type: "string", description: "The definition, JSON", required: true, placeholder: "FILE" } },
    async run(values, context) {
      const file = requiredOption(values, "file");
      let definition: unknown;
      try {
        definition = JSON.parse(await readFile(file, "utf8"));
      } catch (error) {
        throw new CliUsageError(`cannot read ${file} as JSON: ${error instanceof Error ? error.message : String(error)}`);
      }
      const { kit, companyId } = await openCompanyKit(values, context);
      return shown(await refusalsAsUsageErrors(() => kit.plugin("journeys").create(companyId, definition as never)));
    },
  },
  {
    name: "journeys list",
    summary: "A company's journeys",
    options: { ...companyOption },
    async run(values, context) {
      const { kit, companyId } = await openCompanyKit(values, context);
      const journeys = await kit.plugin("journeys").list(companyId);
      return { json: journeys.map(journeyView), text: formatTable(journeys.map(row)) };
    },
  },
  onJourney("journeys show", "One journey: trigger, steps and texts", (kit, companyId, id) => kit.plugin("journeys").get(companyId, id)),
  onJourney("journeys pause", "Pauses a journey: nobody enters, waiting people leave at their next step", (kit, companyId, id) => kit.plugin("journeys").pause(companyId, id)),
  onJourney("journeys resume", "Resumes a paused journey", (kit, companyId, id) => kit.plugin("journeys").resume(companyId, id)),
  {
    name: "journeys delete",
    summary: "Deletes a journey: waiting people leave it at their next step, with nothing sent",
    options: { ...companyOption },
    arguments: journeyArgument,
    async run(values, context) {
      const { kit, companyId } = await openCompanyKit(values, context);
      const id = requiredOption(values, "journey");
      if (!(await kit.plugin("journeys").delete(companyId, id))) throw new CliUsageError(`no journey ${id} at company ${companyId}`);
      return { json: { deleted: id }, text: `deleted journey ${id}` };
    },
  },
  {
    name: "journeys stats",
    summary: "Entered, sent, skipped and exited by reason, and purchases within 7 days of a message",
    options: { ...companyOption },
    arguments: journeyArgument,
    async run(values, context) {
      const { kit, companyId } = await openCompanyKit(values, context);
      const id = requiredOption(values, "journey");
      const stats = await kit.plugin("journeys").stats(companyId, id);
      if (!stats) throw new CliUsageError(`no journey ${id} at company ${companyId}`);
      return { json: stats, text: statsText(stats) };
    },
  },
];
