import { randomUUID } from "node:crypto";
import { CLOCK, EVENTS, inject, injectable, retryConcurrentChanges, STORAGE, type Clock, type EventBus, type Storage } from "../../src/index.ts";
import { noticeLocale, welcomeKind, type NoticeKind } from "./notice-templates.ts";
import type { Notices } from "./notices.ts";
import type { Subscription, SubscriptionState } from "./records.ts";
import { emitAll, subscriptionEvent, type PendingEvent, type SubscriptionEventName } from "./subscription-events.ts";
import type { SubscriptionStore } from "./subscription-store.ts";
import { NOTICES, SUBSCRIPTION_STORE } from "./tokens.ts";

export type KeywordAction = "confirm" | "stop" | "help" | "start";

/** Keywords of wire-compat, plus the French ones that fr-CA texts mention (OUI, ARRET, AIDE). */
const KEYWORDS: Readonly<Record<string, KeywordAction>> = {
  Y: "confirm",
  YES: "confirm",
  OUI: "confirm",
  STOP: "stop",
  STOPALL: "stop",
  UNSUBSCRIBE: "stop",
  CANCEL: "stop",
  END: "stop",
  QUIT: "stop",
  ARRET: "stop",
  ARRÊT: "stop",
  HELP: "help",
  INFO: "help",
  AIDE: "help",
  START: "start",
  UNSTOP: "start",
};

/** The action of a text, ignoring case and surrounding whitespace; undefined for anything else. */
export function keywordOf(body: string): KeywordAction | undefined {
  return KEYWORDS[body.normalize("NFC").trim().toUpperCase()];
}

/** A text a subscriber sent to a company's sender number. */
export interface InboundText {
  /** The subscriber's number (E.164). */
  from: string;
  /** The company's sender number. */
  to: string;
  body: string;
  /** The provider's message id; makes a retried webhook send no second reply. */
  messageId?: string;
}

/** The `sms.inbound_message` event: a text a subscriber sent, keyword or not. */
export interface InboundMessageEvent {
  companyId: string;
  from: string;
  to: string;
  body: string;
  /** The provider's message id, when it gave one. */
  messageId?: string;
  at: number;
}

// Augments the module that declares the interface (see profile-attributes.ts for why not src/index.ts).
declare module "../../src/events/event-bus.ts" {
  interface ReachkitEvents {
    "sms.inbound_message": InboundMessageEvent;
  }
}

export interface InboundResult {
  /** The company whose sender number the text went to; undefined when none has it. */
  companyId?: string;
  keyword?: KeywordAction;
  /** How many subscriptions changed state. */
  changed: number;
}

interface KeywordRule {
  /** Subscriptions in this state change... */
  from: readonly SubscriptionState[];
  /** ...to this one, recorded as this action and announced by this event. */
  to: SubscriptionState;
  action: "confirmed" | "unsubscribed" | "resubscribed";
  event: SubscriptionEventName;
}

const RULES: Readonly<Record<"confirm" | "stop" | "start", KeywordRule>> = {
  confirm: { from: ["pending"], to: "active", action: "confirmed", event: "subscription.confirmed" },
  stop: { from: ["pending", "active"], to: "unsubscribed", action: "unsubscribed", event: "subscription.unsubscribed" },
  start: { from: ["unsubscribed"], to: "active", action: "resubscribed", event: "subscription.created" },
};

/**
 * Y/YES confirms pending TEXT subscriptions; STOP and its synonyms unsubscribe
 * every TEXT subscription of the number at that company and confirm by text;
 * HELP/INFO answers with the help text; START re-subscribes.
 */
@injectable()
export class InboundTexts {
  constructor(
    @inject(STORAGE) private readonly storage: Storage,
    @inject(CLOCK) private readonly clock: Clock,
    @inject(SUBSCRIPTION_STORE) private readonly store: SubscriptionStore,
    @inject(NOTICES) private readonly notices: Notices,
    @inject(EVENTS) private readonly events: EventBus,
  ) {}

  async handle(companyId: string, text: InboundText): Promise<InboundResult> {
    const keyword = keywordOf(text.body);
    const inboundId = text.messageId ?? randomUUID();
    // Again on what is stored now when a subscription moved under it (SubscriptionStore.change).
    const changed = await retryConcurrentChanges(() => this.storage.transaction(async () => {
      const events: PendingEvent[] = [];
      // Every text is an event, in the transaction of what its keyword changes.
      const message = { companyId, from: text.from, to: text.to, body: text.body, at: this.clock.now() };
      await this.events.emit("sms.inbound_message", text.messageId === undefined ? message : { ...message, messageId: text.messageId });
      if (!keyword) return 0;
      const subscriber = await this.store.subscriberByPhone(companyId, text.from);
      const reply = (kind: NoticeKind, key: string) =>
        this.notices.send({ companyId, to: text.from, kind, locale: noticeLocale(subscriber?.locale), idempotencyKey: `${inboundId}:${key}` });
      if (keyword === "help") {
        await reply("help", "help");
        return 0;
      }
      const subscriptions = await this.store.subscriptionsOf(companyId, { phone: text.from });
      const rule = RULES[keyword];
      const now = this.clock.now();
      const moved: Subscription[] = [];
      for (const subscription of subscriptions) {
        const change = { key: `${inboundId}:${subscription.id}`, source: "sms_keyword", at: now, keyword: text.body.trim() };
        if (await this.store.recorded(change.key)) continue; // a provider retrying its webhook
        if (rule.from.includes(subscription.state)) {
          const next = await this.store.change(subscription, { ...change, action: rule.action, to: rule.to });
          events.push(subscriptionEvent(rule.event, next, subscription.state, now));
          moved.push(next);
        } else if (keyword === "stop") {
          await this.store.change(subscription, { ...change, action: "unsubscribe_repeated" });
        }
      }
      if (keyword === "confirm") {
        for (const subscription of moved) await reply(welcomeKind(subscription.type), subscription.id);
      } else if (keyword === "stop" && subscriptions.length > 0) {
        await reply("unsubscribed", "stop");
      } else if (keyword === "start" && moved.length > 0) {
        await reply("resubscribed", "start");
      }
      await emitAll(this.events, events);
      return moved.length;
    }));
    return keyword ? { companyId, keyword, changed } : { companyId, changed };
  }
}
