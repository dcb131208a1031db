import {
  CliUsageError,
  companyOption,
  formatFields,
  formatTable,
  requiredOption,
  stringOption,
  type CliCommand,
  type CliContext,
  type Reachkit,
} from "../../src/index.ts";
import { isNoticeKind, isNoticeLocale, NOTICE_KINDS, NOTICE_LOCALES, type NoticeKind, type NoticeLocale } from "./notice-templates.ts";
import { SenderNumberTakenError } from "./sender-numbers.ts";
import { SUBSCRIPTION_TYPES, type SubscriptionType } from "./sign-up-units.ts";

/** The kit and a company that must exist. */
async function companyKit(values: Parameters<CliCommand["run"]>[0], context: CliContext): Promise<{ kit: Reachkit; companyId: string }> {
  const kit = await context.openKit();
  const companyId = requiredOption(values, "company");
  if (!(await kit.plugin("accounts").getCompany(companyId))) throw new CliUsageError(`no company ${companyId}`);
  return { kit, companyId };
}

/** Refused values (a malformed or taken number, an empty template) are the operator's mistake: exit code 2. */
async function asUsageErrors<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof SenderNumberTakenError || error instanceof RangeError) throw new CliUsageError(error.message);
    throw error;
  }
}

function templateKey(values: Parameters<CliCommand["run"]>[0]): { locale: NoticeLocale; kind: NoticeKind } {
  const locale = requiredOption(values, "locale");
  const kind = requiredOption(values, "kind");
  if (!isNoticeLocale(locale)) throw new CliUsageError(`--locale must be one of ${NOTICE_LOCALES.join(", ")}`);
  if (!isNoticeKind(kind)) throw new CliUsageError(`--kind must be one of ${NOTICE_KINDS.join(", ")}`);
  return { locale, kind };
}

const templateOptions = {
  ...companyOption,
  locale: { type: "string", description: `Locale: ${NOTICE_LOCALES.join(" or ")}`, required: true, placeholder: "LOCALE" },
  kind: { type: "string", description: `Which text: ${NOTICE_KINDS.join(", ")}`, required: true, placeholder: "KIND" },
} as const;

export const subscriptionsCommands: readonly CliCommand[] = [
  {
    name: "signup-units create",
    summary: "Create an API sign-up unit (the signUpSourceId of opt-ins) for a type and locale",
    options: {
      ...companyOption,
      type: { type: "string", description: SUBSCRIPTION_TYPES.join(", "), required: true, placeholder: "TYPE" },
      language: { type: "string", description: "Two-letter language code (default en)", placeholder: "LANG" },
      country: { type: "string", description: "Two-letter country code (default US)", placeholder: "COUNTRY" },
      name: { type: "string", description: "A name for operators", placeholder: "NAME" },
      "email-double-opt-in": { type: "boolean", description: "Email opt-ins stay pending until the link of a confirmation email is opened" },
    },
    async run(values, context) {
      const type = requiredOption(values, "type").toUpperCase();
      if (!SUBSCRIPTION_TYPES.includes(type as SubscriptionType)) throw new CliUsageError(`--type must be one of ${SUBSCRIPTION_TYPES.join(", ")}`);
      const { kit, companyId } = await companyKit(values, context);
      try {
        const unit = await kit.plugin("subscriptions").signUpUnits.create({
          companyId,
          type: type as SubscriptionType,
          language: stringOption(values, "language") ?? "en",
          country: stringOption(values, "country") ?? "US",
          name: stringOption(values, "name"),
          emailDoubleOptIn: values["email-double-opt-in"] === true,
        });
        return { json: unit, text: formatFields({ ...unit }) };
      } catch (error) {
        throw new CliUsageError((error as Error).message);
      }
    },
  },
  {
    name: "signup-units set",
    summary: "Turn the double opt-in of a sign-up unit's email opt-ins on or off",
    options: {
      ...companyOption,
      id: { type: "string", description: "Sign-up unit id", required: true, placeholder: "ID" },
      "email-double-opt-in": { type: "string", description: "on: email opt-ins wait for the confirmation link; off: they are active at once", required: true, placeholder: "on|off" },
    },
    async run(values, context) {
      const setting = requiredOption(values, "email-double-opt-in");
      if (setting !== "on" && setting !== "off") throw new CliUsageError("--email-double-opt-in must be on or off");
      const { kit, companyId } = await companyKit(values, context);
      const unit = await kit.plugin("subscriptions").signUpUnits.setEmailDoubleOptIn(companyId, requiredOption(values, "id"), setting === "on");
      if (!unit) throw new CliUsageError("the company has no sign-up unit with that id");
      return { json: unit, text: formatFields({ ...unit }) };
    },
  },
  {
    name: "signup-units list",
    summary: "List a company's API sign-up units",
    options: companyOption,
    async run(values, context) {
      const kit = await context.openKit();
      const units = await kit.plugin("subscriptions").signUpUnits.list(requiredOption(values, "company"));
      return {
        json: units,
        text: formatTable(units.map((u) => ({ id: u.id, type: u.type, language: u.language, country: u.country, emailDoubleOptIn: u.emailDoubleOptIn ? "on" : "off", name: u.name }))),
      };
    },
  },
  {
    name: "sender-number show",
    summary: "Show a company's sender number and the inbound webhook its SMS provider must call",
    options: companyOption,
    async run(values, context) {
      const { kit, companyId } = await companyKit(values, context);
      return senderNumberResult(kit, companyId, (await kit.plugin("accounts").getCompany(companyId))?.senderNumber ?? null);
    },
  },
  {
    name: "sender-number set",
    summary: "Set a company's sender number (E.164 or a short code); inbound texts to it reach this company",
    options: { ...companyOption, number: { type: "string", description: "The number, e.g. +15551234567", required: true, placeholder: "NUMBER" } },
    async run(values, context) {
      const { kit, companyId } = await companyKit(values, context);
      const senderNumber = await asUsageErrors(() => kit.plugin("subscriptions").senderNumbers.set(companyId, requiredOption(values, "number")));
      return senderNumberResult(kit, companyId, senderNumber);
    },
  },
  {
    name: "message-templates list",
    summary: "List the texts a company sends (opt-in confirmation, welcome, STOP and HELP answers...) in every locale",
    options: companyOption,
    async run(values, context) {
      const { kit, companyId } = await companyKit(values, context);
      const templates = await kit.plugin("subscriptions").templates.list(companyId);
      return {
        json: templates,
        text: templates.map((t) => `${t.locale}  ${t.kind}${t.custom ? "  (custom)" : ""}\n  ${t.text}`).join("\n"),
      };
    },
  },
  {
    name: "message-templates set",
    summary: "Set a company's own wording of one text; {company} and {contact} are filled in",
    options: { ...templateOptions, text: { type: "string", description: "The wording", required: true, placeholder: "TEXT" } },
    async run(values, context) {
      const { kit, companyId } = await companyKit(values, context);
      const { locale, kind } = templateKey(values);
      const saved = await asUsageErrors(() => kit.plugin("subscriptions").templates.set(companyId, locale, kind, requiredOption(values, "text")));
      return { json: saved, text: formatFields({ locale, kind, text: saved.text }) };
    },
  },
  {
    name: "message-templates reset",
    summary: "Go back to the default wording of one text",
    options: templateOptions,
    async run(values, context) {
      const { kit, companyId } = await companyKit(values, context);
      const { locale, kind } = templateKey(values);
      const reset = await kit.plugin("subscriptions").templates.reset(companyId, locale, kind);
      return { json: { locale, kind, reset }, text: reset ? `${locale} ${kind}: back to the default wording` : `${locale} ${kind} already had the default wording` };
    },
  },
  {
    name: "subscriptions list",
    summary: "Show the subscriptions of a phone and/or email at a company, with state and history",
    options: {
      ...companyOption,
      phone: { type: "string", description: "E.164 phone", placeholder: "PHONE" },
      email: { type: "string", description: "Email address", placeholder: "EMAIL" },
    },
    async run(values, context) {
      const phone = stringOption(values, "phone");
      const email = stringOption(values, "email");
      if (phone === undefined && email === undefined) throw new CliUsageError("give --phone or --email");
      const { kit, companyId } = await companyKit(values, context);
      const service = kit.plugin("subscriptions");
      const user = { phone, email };
      const [subscriptions, changes] = await Promise.all([service.subscriptions(companyId, user), service.changes(companyId, user)]);
      const time = (at: number | undefined) => (at === undefined ? "" : new Date(at).toISOString());
      return {
        json: { subscriptions, changes },
        text: [
          formatTable(subscriptions.map((s) => ({ channel: s.channel, type: s.type, address: s.address, state: s.state, since: time(s.updatedAt), source: s.source }))),
          "",
          "history:",
          formatTable(changes.map((c) => ({ at: time(c.at), channel: c.channel, type: c.type ?? "", action: c.action, to: c.to ?? "", source: c.source }))),
        ].join("\n"),
      };
    },
  },
];

function senderNumberResult(kit: Reachkit, companyId: string, senderNumber: string | null) {
  const inboundWebhookPath = kit.plugin("subscriptions").senderNumbers.webhookPath(companyId);
  const result = { companyId, senderNumber, inboundWebhookPath, inboundWebhookUrl: kit.publicUrl("api", inboundWebhookPath) };
  return { json: result, text: formatFields({ ...result, senderNumber: senderNumber ?? "(none)" }) };
}
