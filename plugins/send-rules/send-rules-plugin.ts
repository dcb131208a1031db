import { definePlugin, HttpError, OUTBOX } from "../../src/index.ts";
import { SUBSCRIPTIONS_SERVICE } from "../subscriptions/index.ts";
import { sendRulesCommands } from "./commands.ts";
import { DEFAULT_QUIET_HOURS, type QuietHours } from "./quiet-hours.ts";
import { sendRulesCollections } from "./records.ts";
import { checkPolicy, SendPolicies } from "./send-policies.ts";
import { SendRules } from "./send-rules.ts";
import { PhoneTimeZones } from "./time-zones.ts";
import { PHONE_TIME_ZONES, SEND_POLICIES, SEND_RULES, SEND_RULES_SETTINGS, type SendRulesSettings } from "./tokens.ts";

declare module "../../src/kernel/plugin.ts" {
  interface PluginApis {
    sendRules: SendRules;
  }
}

/** The time zone of a company that set none: reachkit's merchants are mostly in the Americas' Eastern time. */
export const DEFAULT_TIME_ZONE = "America/New_York";
/** Marketing texts a person receives in one local day, across journeys and campaigns. */
export const DEFAULT_DAILY_CAP = 3;

export interface SendRulesPluginOptions {
  /** Default {@link DEFAULT_TIME_ZONE}. */
  timeZone?: string;
  /** Default 20:00 to 11:00; null for none. */
  quietHours?: QuietHours | null;
  /** Default {@link DEFAULT_DAILY_CAP}; null for no cap. */
  dailyCap?: number | null;
}

/**
 * The rules every marketing text of a journey or a campaign passes when it
 * would go: consent, quiet hours in the person's zone, a daily cap per person.
 * Other plugins use them on `SEND_RULES`; each company's own settings are
 * `reachkit send-rules set`.
 */
export function sendRulesPlugin(options: SendRulesPluginOptions = {}) {
  const settings: SendRulesSettings = {
    timeZone: options.timeZone ?? DEFAULT_TIME_ZONE,
    quietHours: options.quietHours === undefined ? DEFAULT_QUIET_HOURS : options.quietHours,
    dailyCap: options.dailyCap === undefined ? DEFAULT_DAILY_CAP : options.dailyCap,
  };
  try {
    checkPolicy(settings);
  } catch (error) {
    if (error instanceof HttpError) throw new RangeError(`sendRulesPlugin: ${error.details.map((detail) => `${detail.path} ${detail.message}`).join("; ")}`);
    throw error;
  }
  return definePlugin({
    name: "sendRules",
    requires: [OUTBOX, SUBSCRIPTIONS_SERVICE],
    collections: sendRulesCollections,
    commands: sendRulesCommands,
    register({ container }) {
      container.bind(SEND_RULES_SETTINGS, { useValue: settings });
      container.bind(PHONE_TIME_ZONES, { useClass: PhoneTimeZones });
      container.bind(SEND_POLICIES, { useClass: SendPolicies });
      container.bind(SEND_RULES, { useClass: SendRules });
    },
    api: ({ resolve }) => resolve(SEND_RULES),
    deleteSubjectData: ({ resolve }, subject) => resolve(SEND_RULES).deleteSubjectData(subject),
  });
}
