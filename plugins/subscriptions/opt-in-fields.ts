import { isDeepStrictEqual } from "node:util";
import type { Identifier } from "../profiles/index.ts";
import type { OptInJob } from "./opt-ins.ts";
import type { ExternalIdentifiers, Subscriber, SubscriptionChannel } from "./records.ts";
import type { UserRef } from "./schemas.ts";
import { channelsOf } from "./users.ts";

const MAX_CUSTOM_IDENTIFIERS_KEPT = 50;

/** The channels of the user's addresses, restricted to `only` when given. */
export function subscribedChannels(user: UserRef, only: readonly SubscriptionChannel[] | undefined): SubscriptionChannel[] {
  return channelsOf(user).filter((channel) => !only || only.includes(channel));
}

/** The fields of a subscriber an opt-in sets: `subscriber`'s (when it has one) with the opt-in's over them. */
export function profileOf(job: OptInJob, subscriber: Subscriber | undefined, now: number) {
  return {
    externalIdentifiers: mergeIdentifiers(subscriber?.externalIdentifiers, job.externalIdentifiers),
    locale: job.locale,
    firstName: job.user.firstName ?? subscriber?.firstName,
    lastName: job.user.lastName ?? subscriber?.lastName,
    updatedAt: now,
  };
}

/** Whether `patch` changes a field of `subscriber` besides its updatedAt. */
export function changesSubscriber(subscriber: Subscriber, patch: Partial<Subscriber>): boolean {
  return Object.entries(patch).some(([field, value]) => field !== "updatedAt" && !isDeepStrictEqual(subscriber[field as keyof Subscriber], value));
}

/** Newer values win; custom identifiers merge by name. */
export function mergeIdentifiers(stored: ExternalIdentifiers | undefined, given: ExternalIdentifiers | undefined): ExternalIdentifiers | undefined {
  if (!given) return stored;
  const merged: ExternalIdentifiers = { ...stored, ...given };
  if (stored?.customIdentifiers || given.customIdentifiers) {
    const custom = new Map((stored?.customIdentifiers ?? []).map((entry) => [entry.name, entry.value]));
    for (const entry of given.customIdentifiers ?? []) custom.set(entry.name, entry.value);
    merged.customIdentifiers = [...custom].map(([name, value]) => ({ name, value })).slice(-MAX_CUSTOM_IDENTIFIERS_KEPT);
  }
  return merged;
}

/** The phone, email and external identifiers of an opt-in, as the profiles plugin links them. */
export function identifiersOf(user: UserRef, external: ExternalIdentifiers | undefined): Identifier[] {
  const identifiers: Identifier[] = [];
  for (const kind of ["phone", "email"] as const) if (user[kind] !== undefined) identifiers.push({ kind, value: user[kind]! });
  for (const kind of ["clientUserId", "shopifyId", "klaviyoId"] as const) if (external?.[kind] !== undefined) identifiers.push({ kind, value: external[kind]! });
  for (const { name, value } of external?.customIdentifiers ?? []) identifiers.push({ kind: "custom", name, value });
  return identifiers;
}
