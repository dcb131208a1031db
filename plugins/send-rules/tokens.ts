import { defineToken } from "../../src/index.ts";
import type { PhoneTimeZones } from "./time-zones.ts";
import type { SendPolicies } from "./send-policies.ts";
import type { SendRules } from "./send-rules.ts";
import type { QuietHours } from "./quiet-hours.ts";

const PROVIDER = "reachkit/plugins/send-rules (sendRulesPlugin)";

/** The defaults of every company that set none, applied. */
export interface SendRulesSettings {
  timeZone: string;
  quietHours: QuietHours | null;
  dailyCap: number | null;
}

export const SEND_RULES_SETTINGS = defineToken<SendRulesSettings>("SendRulesSettings", [PROVIDER]);
export const PHONE_TIME_ZONES = defineToken<PhoneTimeZones>("PhoneTimeZones", [PROVIDER]);
export const SEND_POLICIES = defineToken<SendPolicies>("SendPolicies", [PROVIDER]);
/** The rules every marketing message passes (consent, quiet hours, daily cap), for journeys and campaigns. */
export const SEND_RULES = defineToken<SendRules>("SendRules", [PROVIDER]);
