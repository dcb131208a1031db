import { CliUsageError, companyOption, formatFields, openCompanyKit, refusalsAsUsageErrors, requiredOption, stringOption, type CliCommand } from "../../src/index.ts";
import type { SendPolicy, SendPolicyPatch } from "./send-policies.ts";

/** `20:00-11:00`, or `off`. */
function quietHoursOption(text: string): SendPolicy["quietHours"] {
  if (text === "off") return null;
  const [start, end, ...rest] = text.split("-");
  if (start === undefined || end === undefined || rest.length > 0) throw new CliUsageError("--quiet-hours takes START-END in local time (20:00-11:00), or off");
  return { start, end };
}

function dailyCapOption(text: string): number | null {
  if (text === "off") return null;
  const cap = Number(text);
  return Number.isSafeInteger(cap) ? cap : Number.NaN;
}

const shown = (policy: SendPolicy) => ({
  timeZone: policy.timeZone,
  quietHours: policy.quietHours ? `${policy.quietHours.start}-${policy.quietHours.end}` : "off",
  dailyCap: policy.dailyCap ?? "off",
});

export const sendRulesCommands: readonly CliCommand[] = [
  {
    name: "send-rules show",
    summary: "A company's time zone, quiet hours and daily cap of marketing texts per person",
    options: { ...companyOption },
    async run(values, context) {
      const kit = await context.openKit();
      const policy = await kit.plugin("sendRules").policies.get(requiredOption(values, "company"));
      return { json: policy, text: formatFields(shown(policy)) };
    },
  },
  {
    name: "send-rules set",
    summary: "Changes a company's time zone, quiet hours or daily cap",
    options: {
      ...companyOption,
      "time-zone": { type: "string", description: "IANA zone used when a person's own is unknown", placeholder: "ZONE" },
      "quiet-hours": { type: "string", description: "Local hours without marketing texts, START-END (default 20:00-11:00), or off", placeholder: "HH:MM-HH:MM" },
      "daily-cap": { type: "string", description: "Marketing texts per person per local day, or off", placeholder: "N" },
    },
    async run(values, context) {
      const patch: SendPolicyPatch = {};
      const timeZone = stringOption(values, "time-zone");
      const quietHours = stringOption(values, "quiet-hours");
      const dailyCap = stringOption(values, "daily-cap");
      if (timeZone !== undefined) patch.timeZone = timeZone;
      if (quietHours !== undefined) patch.quietHours = quietHoursOption(quietHours);
      if (dailyCap !== undefined) patch.dailyCap = dailyCapOption(dailyCap);
      if (Object.keys(patch).length === 0) throw new CliUsageError("give --time-zone, --quiet-hours or --daily-cap");
      const { kit, companyId } = await openCompanyKit(values, context);
      const policy = await refusalsAsUsageErrors(() => kit.plugin("sendRules").policies.set(companyId, patch));
      return { json: policy, text: formatFields(shown(policy)) };
    },
  },
];
