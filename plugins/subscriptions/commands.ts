import { CliUsageError, requiredOption, stringOption, type CliCommand } from "../../src/cli/command.ts";
import { formatFields, formatTable } from "../../src/cli/format.ts";
import { SUBSCRIPTION_TYPES, type SubscriptionType } from "./sign-up-units.ts";

export const subscriptionsCommands: readonly CliCommand[] = [
  {
    name: "signup-units create",
    summary: "Create an API sign-up unit (the signUpSourceId of opt-ins) for a type and locale",
    options: {
      company: { type: "string", description: "Company id", required: true, placeholder: "ID" },
      type: { type: "string", description: "MARKETING or TRANSACTIONAL", required: true, placeholder: "TYPE" },
      language: { type: "string", description: "Two-letter language code (default en)", placeholder: "LANG" },
      country: { type: "string", description: "Two-letter country code (default US)", placeholder: "COUNTRY" },
      name: { type: "string", description: "A name for operators", placeholder: "NAME" },
    },
    async run(values, context) {
      const type = requiredOption(values, "type").toUpperCase();
      if (!SUBSCRIPTION_TYPES.includes(type as SubscriptionType)) throw new CliUsageError("--type must be MARKETING or TRANSACTIONAL");
      const kit = await context.openKit();
      const companyId = requiredOption(values, "company");
      if (!(await kit.plugin("accounts").getCompany(companyId))) throw new CliUsageError(`no company ${companyId}`);
      try {
        const unit = await kit.plugin("subscriptions").signUpUnits.create({
          companyId,
          type: type as SubscriptionType,
          language: stringOption(values, "language") ?? "en",
          country: stringOption(values, "country") ?? "US",
          name: stringOption(values, "name"),
        });
        return { json: unit, text: formatFields({ ...unit }) };
      } catch (error) {
        throw new CliUsageError((error as Error).message);
      }
    },
  },
  {
    name: "signup-units list",
    summary: "List a company's API sign-up units",
    options: { company: { type: "string", description: "Company id", required: true, placeholder: "ID" } },
    async run(values, context) {
      const kit = await context.openKit();
      const units = await kit.plugin("subscriptions").signUpUnits.list(requiredOption(values, "company"));
      return {
        json: units,
        text: formatTable(units.map((u) => ({ id: u.id, type: u.type, language: u.language, country: u.country, name: u.name }))),
      };
    },
  },
];
