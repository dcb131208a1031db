import {
  CliUsageError,
  companyOption,
  formatFields,
  requiredOption,
  stringOption,
  type CliCommand,
  type CliContext,
  type CliValues,
  type Reachkit,
} from "../../src/index.ts";
import { renderPrefix } from "./message-prefixes.ts";

/** The kit and a company that must exist. */
async function companyKit(values: CliValues, context: CliContext): Promise<{ kit: Reachkit; companyId: string; companyName: string }> {
  const kit = await context.openKit();
  const companyId = requiredOption(values, "company");
  const company = await kit.plugin("accounts").getCompany(companyId);
  if (!company) throw new CliUsageError(`no company ${companyId}`);
  return { kit, companyId, companyName: company.name };
}

async function showPrefix(values: CliValues, context: CliContext) {
  const { kit, companyId, companyName } = await companyKit(values, context);
  const { template, custom } = await kit.plugin("legacy").prefixes.template(companyId);
  const fields = { companyId, template, custom, example: `${renderPrefix(template, { company: companyName, firstName: "Ada" })}Your order has shipped.` };
  return { json: fields, text: formatFields(fields) };
}

export const legacyCommands: readonly CliCommand[] = [
  {
    name: "message-prefix show",
    summary: "The text a company's transactional messages start with (default \"{company}: \")",
    options: companyOption,
    run: showPrefix,
  },
  {
    name: "message-prefix set",
    summary: "Set the prefix of a company's transactional messages; {company} and {firstName} are filled in",
    options: { ...companyOption, template: { type: "string", description: 'e.g. "{company}: Hi {firstName}, " (empty: no prefix)', required: true, placeholder: "TEXT" } },
    async run(values, context) {
      const template = stringOption(values, "template");
      if (template === undefined) throw new CliUsageError("--template is required");
      const { kit, companyId } = await companyKit(values, context);
      try {
        await kit.plugin("legacy").prefixes.set(companyId, template);
      } catch (error) {
        if (error instanceof RangeError) throw new CliUsageError(error.message);
        throw error;
      }
      return showPrefix(values, context);
    },
  },
  {
    name: "message-prefix reset",
    summary: "Back to the default prefix (the company name and \": \")",
    options: companyOption,
    async run(values, context) {
      const { kit, companyId } = await companyKit(values, context);
      await kit.plugin("legacy").prefixes.reset(companyId);
      return showPrefix(values, context);
    },
  },
];
