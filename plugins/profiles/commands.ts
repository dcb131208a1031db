import { CliUsageError, companyOption, formatFields, formatTable, requiredOption, stringOption, type CliCommand } from "../../src/index.ts";
import type { Identifier } from "./records.ts";

/** Events `profiles show` prints unless told otherwise. */
const DEFAULT_SHOWN_EVENTS = 20;

function identifierOption(values: Parameters<CliCommand["run"]>[0]): Identifier {
  const given = (
    [
      ["phone", stringOption(values, "phone")],
      ["email", stringOption(values, "email")?.trim().toLowerCase()],
      ["clientUserId", stringOption(values, "client-user-id")],
    ] as const
  ).filter(([, value]) => value !== undefined && value !== "");
  if (given.length !== 1) throw new CliUsageError("give exactly one of --phone, --email and --client-user-id");
  const [kind, value] = given[0]!;
  return { kind, value: value! };
}

export const profilesCommands: readonly CliCommand[] = [
  {
    name: "profiles show",
    summary: "One person's profile: identifiers, custom attributes and newest events",
    options: {
      ...companyOption,
      phone: { type: "string", description: "The person's phone (E.164)", placeholder: "PHONE" },
      email: { type: "string", description: "The person's email", placeholder: "EMAIL" },
      "client-user-id": { type: "string", description: "The person's clientUserId", placeholder: "ID" },
      events: { type: "string", description: `How many of the newest events (default ${DEFAULT_SHOWN_EVENTS}, at most 100)`, placeholder: "N" },
    },
    async run(values, context) {
      const identifier = identifierOption(values);
      const first = Number(stringOption(values, "events") ?? DEFAULT_SHOWN_EVENTS);
      if (!Number.isSafeInteger(first) || first < 0 || first > 100) throw new CliUsageError("--events must be a whole number from 0 to 100");
      const kit = await context.openKit();
      const companyId = requiredOption(values, "company");
      if (!(await kit.plugin("accounts").getCompany(companyId))) throw new CliUsageError(`no company ${companyId}`);
      const profiles = kit.plugin("profiles");
      const profile = await profiles.show(companyId, identifier);
      if (!profile) throw new CliUsageError(`no profile with ${identifier.kind} ${identifier.value} at company ${companyId}`);
      const { events } = await profiles.events(companyId, profile.id, { first });
      const shownEvents = events.map((event) => ({
        occurredAt: new Date(event.occurredAt).toISOString(),
        kind: event.kind,
        type: event.type ?? "",
        detail: JSON.stringify(
          event.kind === "custom"
            ? (event.properties ?? {})
            : { ...(event.orderId !== undefined ? { orderId: event.orderId } : {}), ...(event.salesChannel ? { salesChannel: event.salesChannel } : {}), items: event.items },
        ),
      }));
      const text = [
        formatFields({
          id: profile.id,
          createdAt: new Date(profile.createdAt).toISOString(),
          identifiers: profile.identifiers.map(({ kind, name, value }) => ({ kind: name === undefined ? kind : `${kind} ${name}`, value })),
          attributes: profile.attributes.map(({ name, value, type }) => ({ name, value: JSON.stringify(value), type })),
        }),
        "events (newest first):",
        formatTable(shownEvents),
      ].join("\n");
      return { json: { ...profile, events }, text };
    },
  },
];
