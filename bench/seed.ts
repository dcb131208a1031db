import { randomUUID } from "node:crypto";
import { SUBSCRIBERS, SUBSCRIPTIONS, type Subscriber, type Subscription, type SubscriptionState } from "../plugins/subscriptions/records.ts";
import type { Storage } from "../src/index.ts";

/** Stores `count` subscribers of a company, each with a MARKETING TEXT subscription, in two bulk writes. */
export async function seedSubscribers(
  storage: Storage,
  companyId: string,
  count: number,
  phoneOf: (i: number) => string,
  stateOf: (i: number) => SubscriptionState = () => "active",
): Promise<void> {
  const now = Date.now();
  const subscribers: Subscriber[] = [];
  const subscriptions: Subscription[] = [];
  for (let i = 0; i < count; i++) {
    const subscriber: Subscriber = { id: randomUUID(), companyId, phone: phoneOf(i), createdAt: now, updatedAt: now };
    subscribers.push(subscriber);
    subscriptions.push({
      id: randomUUID(),
      companyId,
      subscriberId: subscriber.id,
      type: "MARKETING",
      channel: "TEXT",
      address: subscriber.phone!,
      state: stateOf(i),
      subscribedAt: now,
      source: "api",
      createdAt: now,
      updatedAt: now,
    });
  }
  await storage.collection<Subscriber>(SUBSCRIBERS).upsertMany(subscribers);
  await storage.collection<Subscription>(SUBSCRIPTIONS).upsertMany(subscriptions);
}
