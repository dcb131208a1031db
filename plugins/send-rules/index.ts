export { sendRulesPlugin, DEFAULT_TIME_ZONE, DEFAULT_DAILY_CAP, type SendRulesPluginOptions } from "./send-rules-plugin.ts";
export { SEND_RULES, SEND_POLICIES, SEND_RULES_SETTINGS, PHONE_TIME_ZONES, type SendRulesSettings } from "./tokens.ts";
export { SendRules, TIME_ZONE_ATTRIBUTE, type RuledText, type SendOutcome, type SkipReason } from "./send-rules.ts";
export { SendPolicies, MAX_DAILY_CAP, checkPolicy, type SendPolicy, type SendPolicyPatch } from "./send-policies.ts";
export { DEFAULT_QUIET_HOURS, quietUntil, quietHoursOverlap, startOfLocalDay, clockMinutes, isTimeZone, type QuietHours } from "./quiet-hours.ts";
export { PhoneTimeZones } from "./time-zones.ts";
