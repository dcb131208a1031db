import type { CollectionSpec, Doc, JsonValue } from "../../src/index.ts";

/**
 * One call of the legacy add-subscriber, as received: the record of the opt-in
 * the legal rules ask to keep, with what the subscriptions plugin does not store
 * (visitor, creative, free metadata). A privacy request deletes it.
 */
export interface LegacySignUp extends Doc {
  companyId: string;
  subscriberId: string;
  /** E.164. */
  phone: string;
  /** Lower case. */
  email?: string;
  visitorId?: string;
  creativeId?: string;
  metadata?: Record<string, JsonValue>;
  /** The call created the subscriber (answered 201). */
  created: boolean;
  at: number;
}

/** A company's own prefix of transactional messages; absent: `DEFAULT_MESSAGE_PREFIX`. The id is the company id. */
export interface MessagePrefixRecord extends Doc {
  companyId: string;
  template: string;
  updatedAt: number;
}

export const SIGN_UPS = "legacy_sign_ups";
export const MESSAGE_PREFIXES = "legacy_message_prefixes";

export const legacyCollections: readonly CollectionSpec[] = [
  {
    name: SIGN_UPS,
    // Sparse on the email, which most sign-ups lack; privacy deletions look it up by value.
    indexes: [{ fields: ["companyId", "phone"] }, { fields: ["companyId", "email"], sparse: true }],
  },
  { name: MESSAGE_PREFIXES },
];
