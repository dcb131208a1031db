import { defineToken } from "../kernel/token.ts";

/** What a link in a message is for: its source and recipient (each recipient gets a link of their own). */
export interface LinkContext {
  /** `campaign`, `journey`, `message`. */
  source: string;
  campaignId?: string;
  variant?: string;
  /** Makes the link one of this recipient's (with the URL): a campaign's recipient, a journey's person. */
  recipientId?: string;
  profileId?: string;
  /** The phone or email the message goes to. */
  address?: string;
  channel: "sms" | "email";
}

/**
 * Turns the URLs of a message's text into tracked short links. The core keeps
 * links as written; the campaigns plugin binds its short links here, so
 * journeys and transactional messages are shortened where it runs.
 */
export interface LinkShortener {
  shortenText(companyId: string, text: string, context: LinkContext): Promise<string>;
}

/** Links kept as written: the binding of a kit without the campaigns plugin. */
export const KEEP_LINKS: LinkShortener = { shortenText: async (_companyId, text) => text };

export const LINK_SHORTENER = defineToken<LinkShortener>("LinkShortener", ["reachkit core (links kept as written)", "reachkit/plugins/campaigns (campaignsPlugin: tracked short links)"]);
