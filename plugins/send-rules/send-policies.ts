import { CLOCK, inject, injectable, invalidFields, STORAGE, type Clock, type Collection, type ErrorDetail, type Storage } from "../../src/index.ts";
import { clockMinutes, isTimeZone, type QuietHours } from "./quiet-hours.ts";
import { POLICIES, type SendPolicyRecord } from "./records.ts";
import { SEND_RULES_SETTINGS, type SendRulesSettings } from "./tokens.ts";

/** The most marketing messages a cap may allow a person in a day. */
export const MAX_DAILY_CAP = 100;

/** A company's rules, defaults applied. */
export interface SendPolicy {
  timeZone: string;
  quietHours: QuietHours | null;
  dailyCap: number | null;
}

export type SendPolicyPatch = Partial<SendPolicy>;

/** How long another process's change to a company's rules may go unseen here (changes made here are seen at once). */
export const POLICY_CACHE_MS = 5_000;

/** Each company's time zone, quiet hours and daily cap. */
@injectable()
export class SendPolicies {
  private readonly policies: Collection<SendPolicyRecord>;
  private readonly cache = new Map<string, { until: number; policy: SendPolicy }>();

  constructor(
    @inject(STORAGE) storage: Storage,
    @inject(CLOCK) private readonly clock: Clock,
    @inject(SEND_RULES_SETTINGS) private readonly defaults: SendRulesSettings,
  ) {
    this.policies = storage.collection(POLICIES);
  }

  async get(companyId: string): Promise<SendPolicy> {
    const now = this.clock.now();
    const cached = this.cache.get(companyId);
    if (cached && cached.until > now) return cached.policy;
    const stored = await this.policies.get(companyId);
    const policy: SendPolicy = {
      timeZone: stored?.timeZone ?? this.defaults.timeZone,
      quietHours: stored?.quietHours === undefined ? this.defaults.quietHours : stored.quietHours,
      dailyCap: stored?.dailyCap === undefined ? this.defaults.dailyCap : stored.dailyCap,
    };
    if (this.cache.size >= 10_000) this.cache.clear();
    this.cache.set(companyId, { until: now + POLICY_CACHE_MS, policy });
    return policy;
  }

  /** Changes the fields given; 400 naming each invalid one, and nothing is changed then. */
  async set(companyId: string, patch: SendPolicyPatch): Promise<SendPolicy> {
    checkPolicy(patch);
    const stored = await this.policies.get(companyId);
    const fields = Object.fromEntries(Object.entries(patch).filter(([, value]) => value !== undefined));
    await this.policies.upsert({ ...(stored ?? {}), ...fields, id: companyId, updatedAt: this.clock.now() });
    this.cache.delete(companyId);
    return this.get(companyId);
  }
}

/** Throws the 400 naming every invalid field of a policy change. */
export function checkPolicy(patch: SendPolicyPatch, prefix = ""): void {
  const errors: ErrorDetail[] = [];
  if (patch.timeZone !== undefined && (typeof patch.timeZone !== "string" || !isTimeZone(patch.timeZone))) {
    errors.push({ path: `${prefix}timeZone`, message: "must be an IANA time zone such as America/New_York" });
  }
  if (patch.quietHours !== undefined && patch.quietHours !== null) {
    for (const edge of ["start", "end"] as const) {
      const value = (patch.quietHours as Partial<QuietHours>)[edge];
      if (typeof value !== "string" || clockMinutes(value) === undefined) errors.push({ path: `${prefix}quietHours.${edge}`, message: "must be a local time HH:MM, such as 20:00" });
    }
  }
  if (patch.dailyCap !== undefined && patch.dailyCap !== null && (!Number.isSafeInteger(patch.dailyCap) || patch.dailyCap < 1 || patch.dailyCap > MAX_DAILY_CAP)) {
    errors.push({ path: `${prefix}dailyCap`, message: `must be a whole number from 1 to ${MAX_DAILY_CAP}, or null for no cap` });
  }
  if (errors.length > 0) throw invalidFields(errors);
}
