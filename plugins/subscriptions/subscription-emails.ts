import { ACCOUNTS, OUTBOX, escapeHtml, inject, injectable, type Accounts, type Outbox, type OutboxMessage } from "../../src/index.ts";
import type { EmailLinks } from "./email-links.ts";
import type { SubscriptionType } from "./sign-up-units.ts";
import { EMAIL_LINKS } from "./tokens.ts";

/** An email to a subscriber, of one subscription type: it goes out only while that subscription is active. */
export interface SubscriberEmail {
  to: string;
  type: SubscriptionType;
  subject: string;
  /** The plain-text part. */
  text: string;
  html?: string;
  /** What it is for, as the outbox records it (default `marketing` or `transactional`, from the type). */
  kind?: string;
  /** Stable per logical email: sending again with it returns the first one. */
  idempotencyKey?: string;
  tags?: Record<string, string>;
}

/**
 * The emails of the subscriptions plugin, each through the outbox: the
 * confirmation of a double opt-in, and the emails sent to subscribers, which
 * carry `List-Unsubscribe` with a one-click link (RFC 8058) to leave that type.
 */
@injectable()
export class SubscriptionEmails {
  constructor(
    @inject(OUTBOX) private readonly outbox: Outbox,
    @inject(ACCOUNTS) private readonly accounts: Accounts,
    @inject(EMAIL_LINKS) private readonly links: EmailLinks,
  ) {}

  /** Asks the address to confirm its pending subscription (inside the opt-in's transaction: sent once it commits). */
  async sendConfirmation(companyId: string, email: string, type: SubscriptionType, idempotencyKey: string): Promise<void> {
    const company = await this.accounts.getCompany(companyId);
    if (!company) return; // deleted meanwhile: nobody to speak for
    const url = this.links.confirmUrl(companyId, email, type);
    const what = type === "MARKETING" ? "news and offers" : "order and account updates";
    await this.outbox.sendEmail({
      companyId,
      to: email,
      subject: `Confirm your subscription to ${company.name}`,
      text: `Please confirm that ${email} should receive ${what} from ${company.name} by opening this link:\n\n${url}\n\nIf you did not sign up, ignore this email: nothing will be sent.`,
      html:
        `<p>Please confirm that ${escapeHtml(email)} should receive ${what} from ${escapeHtml(company.name)}.</p>` +
        `<p><a href="${escapeHtml(url)}">Confirm my subscription</a></p>` +
        `<p>If you did not sign up, ignore this email: nothing will be sent.</p>`,
      kind: "email_opt_in_confirmation",
      idempotencyKey,
    });
  }

  /** Queues an email to a subscriber with its one-click unsubscribe headers; the caller has checked eligibility. */
  send(companyId: string, email: SubscriberEmail): Promise<OutboxMessage> {
    const unsubscribe = this.links.unsubscribeUrl(companyId, email.to, email.type);
    return this.outbox.sendEmail({
      companyId,
      to: email.to,
      subject: email.subject,
      text: email.text,
      ...(email.html !== undefined ? { html: email.html } : {}),
      headers: { "List-Unsubscribe": `<${unsubscribe}>`, "List-Unsubscribe-Post": "List-Unsubscribe=One-Click" },
      kind: email.kind ?? email.type.toLowerCase(),
      ...(email.idempotencyKey !== undefined ? { idempotencyKey: email.idempotencyKey } : {}),
      ...(email.tags ? { tags: email.tags } : {}),
    });
  }
}
