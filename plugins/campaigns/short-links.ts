import { CLOCK, EVENTS, GROUP_COMMIT, inject, injectable, invalidFields, PUBLIC_URL, SECRET, sign, sortableId, STORAGE, type Clock, type Collection, type EventBus, type GroupCommit, type LinkContext, type LinkShortener, type PublicUrl, type Storage } from "../../src/index.ts";
import { isHttpUrl } from "./campaigns.ts";
import { CLICKS, LINK_DOMAINS, SHORT_LINKS, type ClickRecord, type LinkDomainRecord, type ShortLinkRecord } from "./records.ts";

/** Characters of a short code: 72 bits of an HMAC, base64url. */
export const SHORT_CODE_LENGTH = 12;
const SHORT_CODE = new RegExp(`^[A-Za-z0-9_-]{${SHORT_CODE_LENGTH}}$`);
/** A URL in a message: up to the first space or quote, without the punctuation that ends a sentence. */
const URL_IN_TEXT = /https?:\/\/[^\s<>"']+/g;
const TRAILING_PUNCTUATION = /[.,;:!?)\]]+$/;

/** A click on a tracked short link, as webhooks forward it (`sms.message_link_click`, `email.message_link_click`). */
export interface LinkClickEvent {
  companyId: string;
  /** The short code. */
  linkId: string;
  url: string;
  /** campaign, journey or message. */
  source: string;
  campaignId?: string;
  variant?: string;
  profileId?: string;
  /** The phone (sms) or email the message went to. */
  address?: string;
  at: number;
}

declare module "../../src/events/event-bus.ts" {
  interface ReachkitEvents {
    "sms.message_link_click": LinkClickEvent;
    "email.message_link_click": LinkClickEvent;
  }
}


/**
 * Tracked short links: one per recipient and URL, on the server's short host
 * (`/l/<code>`) or the company's own domain. The code is an HMAC of the
 * link's company, source, recipient and URL under the kit's secret, so the
 * same message built again (a send that runs again after a crash) gets the
 * same link, and a code nobody was given is not guessed; a code not stored
 * is a 404, never a redirect to somewhere a caller chose.
 */
@injectable()
export class ShortLinks implements LinkShortener {
  private readonly links: Collection<ShortLinkRecord>;
  private readonly clicks: Collection<ClickRecord>;
  private readonly domains: Collection<LinkDomainRecord>;

  constructor(
    @inject(STORAGE) storage: Storage,
    @inject(CLOCK) private readonly clock: Clock,
    @inject(SECRET) private readonly secret: string,
    @inject(PUBLIC_URL) private readonly publicUrl: PublicUrl,
    @inject(EVENTS) private readonly events: EventBus,
    @inject(GROUP_COMMIT) private readonly groupCommit: GroupCommit,
  ) {
    this.links = storage.collection(SHORT_LINKS);
    this.clicks = storage.collection(CLICKS);
    this.domains = storage.collection(LINK_DOMAINS);
  }

  /** The short link of `url` for one recipient, stored if new. */
  async shorten(companyId: string, url: string, context: LinkContext): Promise<string> {
    return (await this.shortenMany(companyId, [{ url, context }]))[0]!;
  }

  /**
   * The short links of many URLs and recipients (a campaign's page), in order: one read of the company's link
   * domain, one of the codes already stored and one write of the new ones, whatever their number.
   */
  async shortenMany(companyId: string, links: readonly { url: string; context: LinkContext }[]): Promise<string[]> {
    if (links.length === 0) return [];
    const codes = links.map(({ url, context }) => sign(this.secret, "short-link", companyId, context.source, context.campaignId ?? "", context.recipientId ?? context.address ?? "", url).slice(0, SHORT_CODE_LENGTH));
    const stored = new Set((await this.links.find({ where: { id: { in: [...new Set(codes)] } } })).items.map((link) => link.id));
    const now = this.clock.now();
    const added: ShortLinkRecord[] = [];
    links.forEach(({ url, context }, i) => {
      const code = codes[i]!;
      if (stored.has(code)) return;
      stored.add(code);
      added.push({ id: code, companyId, url, ...context, createdAt: now });
    });
    if (added.length > 0) await this.links.upsertMany(added);
    const base = await this.base(companyId);
    return codes.map((code) => `${base}/l/${code}`);
  }

  /** Every http(s) URL of a text replaced by its short link for this recipient. */
  async shortenText(companyId: string, text: string, context: LinkContext): Promise<string> {
    const urls = urlsIn(text);
    return replaceUrls(text, urls, await this.shortenMany(companyId, urls.map((url) => ({ url, context }))));
  }

  /**
   * A click: the URL to redirect to, with the click recorded and announced;
   * undefined for an unknown code. The clicks that arrive during one
   * event-loop turn are written in one shared commit (the kit's group
   * commit), and each resolves only once that commit is done: a redirect is
   * never answered for a click that a crash could still lose.
   */
  async click(code: string): Promise<string | undefined> {
    if (!SHORT_CODE.test(code)) return undefined;
    const link = await this.links.get(code);
    if (!link) return undefined;
    await this.groupCommit.run(() => this.#recordClick(link));
    return link.url;
  }

  async #recordClick(link: ShortLinkRecord): Promise<void> {
    const at = this.clock.now();
    const { id, companyId, url, source, campaignId, variant, recipientId, profileId, address, channel } = link;
    const optional = {
      ...(campaignId !== undefined ? { campaignId } : {}),
      ...(variant !== undefined ? { variant } : {}),
      ...(profileId !== undefined ? { profileId } : {}),
    };
    await this.clicks.insert({ id: sortableId(at), companyId, linkId: id, ...optional, ...(recipientId !== undefined ? { recipientId } : {}), at });
    await this.events.emit(channel === "email" ? "email.message_link_click" : "sms.message_link_click", { companyId, linkId: id, url, source, ...optional, ...(address !== undefined ? { address } : {}), at });
  }

  /** Where a company's short links point: its own domain, else the server's short host. */
  async base(companyId: string): Promise<string> {
    return (await this.domains.get(companyId))?.domain ?? this.publicUrl("short", "");
  }

  /** Sets the company's own link domain (`https://go.example.com`, which must reach this server's `/l/` paths), or null for the short host. */
  async setDomain(companyId: string, domain: string | null): Promise<string> {
    if (domain === null) {
      await this.domains.delete(companyId);
    } else {
      const parsed = isHttpUrl(domain) ? new URL(domain) : undefined;
      if (!parsed || parsed.pathname !== "/" || parsed.search || parsed.hash || parsed.username || parsed.password) {
        throw invalidFields([{ path: "domain", message: "must be an http or https origin such as https://go.example.com" }]);
      }
      await this.domains.upsert({ id: companyId, domain: parsed.origin, updatedAt: this.clock.now() });
    }
    return this.base(companyId);
  }

  /** Forgets a person's links and clicks (privacy deletion). */
  async forget(companyId: string, profileIds: readonly string[]): Promise<number> {
    const profileId = { in: [...profileIds] };
    return (await this.clicks.deleteWhere({ companyId, profileId })) + (await this.links.deleteWhere({ companyId, profileId }));
  }
}

/** The distinct http(s) URLs written in a text. */
export function urlsIn(text: string): string[] {
  return [...new Set(Array.from(text.matchAll(URL_IN_TEXT), (match) => match[0].replace(TRAILING_PUNCTUATION, "")))];
}

/** `text` with each of `urls` (as {@link urlsIn} found them) replaced by the short link at the same position. */
export function replaceUrls(text: string, urls: readonly string[], shortened: readonly string[]): string {
  return urls.reduce((replaced, url, i) => replaced.split(url).join(shortened[i]!), text);
}
