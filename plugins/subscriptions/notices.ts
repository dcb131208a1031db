import { ACCOUNTS, inject, injectable, OUTBOX, type Accounts, type Company, type OutboundMessage, type Outbox } from "../../src/index.ts";
import { renderTemplate, type NoticeKind, type NoticeLocale, type NoticeTemplates } from "./notice-templates.ts";
import { NOTICE_TEMPLATES } from "./tokens.ts";

/** One notice to send: who, which wording, and the key that makes a re-run job send it once. */
export interface Notice {
  companyId: string;
  /** E.164. */
  to: string;
  kind: NoticeKind;
  locale: NoticeLocale;
  idempotencyKey: string;
  /**
   * At most one notice of this kind to this number within this many milliseconds, for an attempt the caller
   * records itself (a repeated opt-in's or unsubscribe's change record): later ones are neither sent nor stored.
   */
  onePerKindWithinMs?: number;
}

/** Renders a company's wording of a notice and hands it to the outbox (every SMS goes through it). */
@injectable()
export class Notices {
  constructor(
    @inject(NOTICE_TEMPLATES) private readonly templates: NoticeTemplates,
    @inject(OUTBOX) private readonly outbox: Outbox,
    @inject(ACCOUNTS) private readonly accounts: Accounts,
  ) {}

  /**
   * `send` for many notices: each company read once and each of its wordings once, its texts recorded by
   * one `Outbox.sendMany` (in one write; one after the other when they have a repeat window).
   */
  async sendMany(notices: readonly Notice[]): Promise<void> {
    const byCompany = new Map<string, Notice[]>();
    for (const notice of notices) byCompany.set(notice.companyId, [...(byCompany.get(notice.companyId) ?? []), notice]);
    for (const [companyId, ofCompany] of byCompany) {
      const company = await this.accounts.getCompany(companyId);
      if (!company) continue; // deleted meanwhile: nobody to speak for
      const wordings = new Map<string, string>();
      const messages: OutboundMessage[] = [];
      for (const notice of ofCompany) {
        const wordingKey = `${notice.locale} ${notice.kind}`;
        let text = wordings.get(wordingKey);
        if (text === undefined) wordings.set(wordingKey, (text = await this.templates.text(companyId, notice.locale, notice.kind)));
        messages.push(textOf(notice, text, company));
      }
      await this.outbox.sendMany(messages);
    }
  }

  async send(notice: Notice): Promise<void> {
    const company = await this.accounts.getCompany(notice.companyId);
    if (!company) return; // deleted meanwhile: nobody to speak for
    const text = await this.templates.text(notice.companyId, notice.locale, notice.kind);
    await this.outbox.send(textOf(notice, text, company));
  }
}

/** The text of a notice in the company's wording `text`. */
function textOf(notice: Notice, text: string, company: Company): OutboundMessage {
  return {
    companyId: notice.companyId,
    to: notice.to,
    body: renderTemplate(text, { company: company.name, contact: company.contactEmail || company.domain }),
    kind: notice.kind,
    idempotencyKey: notice.idempotencyKey,
    ...(notice.onePerKindWithinMs ? { onePerKindWithinMs: notice.onePerKindWithinMs, recordSuppressed: false } : {}),
    company,
  };
}
