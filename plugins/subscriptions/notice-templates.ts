import { CLOCK, fillPlaceholders, inject, injectable, STORAGE, type Clock, type Collection, type Storage } from "../../src/index.ts";
import { TEMPLATES, type Locale, type TemplateOverride } from "./records.ts";
import type { SubscriptionType } from "./sign-up-units.ts";

export const NOTICE_LOCALES = ["en-US", "fr-CA"] as const;
export type NoticeLocale = (typeof NOTICE_LOCALES)[number];

export const NOTICE_KINDS = [
  "confirm_request_marketing",
  "confirm_request_transactional",
  "welcome_marketing",
  "welcome_transactional",
  "already_subscribed",
  "unsubscribed",
  "already_unsubscribed",
  "resubscribed",
  "help",
] as const;
/** Every text the subscriptions plugin sends. Each kind is also the outbox `kind` of the message. */
export type NoticeKind = (typeof NOTICE_KINDS)[number];

/** Placeholders a template may use. */
export interface NoticeValues {
  /** The company's display name. */
  company: string;
  /** How to reach the company: its contact email, else its domain. */
  contact: string;
}

export const MAX_TEMPLATE_LENGTH = 1600;

const MARKETING_TERMS_EN = "Consent is not a condition of purchase. Msg & data rates may apply. Msg frequency varies.";
const MARKETING_TERMS_FR = "Le consentement n'est pas une condition d'achat. Des frais de messagerie et de données peuvent s'appliquer. La fréquence des messages varie.";

/**
 * The default wording, with the legal disclosure of each program (interface 4.4
 * rule 5). Companies override any of them per locale (`reachkit message-templates set`).
 */
export const DEFAULT_TEMPLATES: Readonly<Record<NoticeLocale, Readonly<Record<NoticeKind, string>>>> = {
  "en-US": {
    confirm_request_marketing: `{company}: Reply Y to receive recurring automated marketing texts (e.g. cart reminders) from {company} at this number. ${MARKETING_TERMS_EN} Reply HELP for help, STOP to cancel.`,
    confirm_request_transactional: "{company}: Reply Y to receive automated account and order texts from {company} at this number. Msg & data rates may apply. Reply HELP for help, STOP to cancel.",
    welcome_marketing: `{company}: You are subscribed to recurring automated marketing texts from {company}. ${MARKETING_TERMS_EN} Reply HELP for help, STOP to cancel.`,
    welcome_transactional: "{company}: You are subscribed to automated account and order texts from {company}. Msg & data rates may apply. Reply HELP for help, STOP to cancel.",
    already_subscribed: "{company}: You are already subscribed to texts from {company}. Reply HELP for help, STOP to cancel.",
    unsubscribed: "{company}: You are unsubscribed and will receive no more texts from {company}. Reply START to subscribe again.",
    already_unsubscribed: "{company}: You are already unsubscribed from texts from {company}. Reply START to subscribe again.",
    resubscribed: "{company}: You are subscribed again to texts from {company}. Msg & data rates may apply. Reply HELP for help, STOP to cancel.",
    help: "{company}: For help, contact {contact}. Msg & data rates may apply. Reply STOP to cancel.",
  },
  "fr-CA": {
    confirm_request_marketing: `{company} : Répondez Y pour recevoir des textos marketing automatisés et récurrents (p. ex. rappels de panier) de {company} à ce numéro. ${MARKETING_TERMS_FR} Répondez AIDE pour de l'aide, ARRET pour annuler.`,
    confirm_request_transactional: "{company} : Répondez Y pour recevoir des textos automatisés sur votre compte et vos commandes de {company} à ce numéro. Des frais de messagerie et de données peuvent s'appliquer. Répondez AIDE pour de l'aide, ARRET pour annuler.",
    welcome_marketing: `{company} : Vous êtes abonné aux textos marketing automatisés et récurrents de {company}. ${MARKETING_TERMS_FR} Répondez AIDE pour de l'aide, ARRET pour annuler.`,
    welcome_transactional: "{company} : Vous êtes abonné aux textos automatisés sur votre compte et vos commandes de {company}. Des frais de messagerie et de données peuvent s'appliquer. Répondez AIDE pour de l'aide, ARRET pour annuler.",
    already_subscribed: "{company} : Vous êtes déjà abonné aux textos de {company}. Répondez AIDE pour de l'aide, ARRET pour annuler.",
    unsubscribed: "{company} : Vous êtes désabonné et ne recevrez plus de textos de {company}. Répondez START pour vous abonner de nouveau.",
    already_unsubscribed: "{company} : Vous êtes déjà désabonné des textos de {company}. Répondez START pour vous abonner de nouveau.",
    resubscribed: "{company} : Vous êtes de nouveau abonné aux textos de {company}. Des frais de messagerie et de données peuvent s'appliquer. Répondez AIDE pour de l'aide, ARRET pour annuler.",
    help: "{company} : Pour de l'aide, écrivez à {contact}. Des frais de messagerie et de données peuvent s'appliquer. Répondez ARRET pour annuler.",
  },
};

// Checkout-abandoned texts are cart reminders: marketing texts, with the marketing legal language.
export const confirmRequestKind = (type: SubscriptionType): NoticeKind =>
  type === "TRANSACTIONAL" ? "confirm_request_transactional" : "confirm_request_marketing";
export const welcomeKind = (type: SubscriptionType): NoticeKind => (type === "TRANSACTIONAL" ? "welcome_transactional" : "welcome_marketing");

export const isNoticeKind = (value: string): value is NoticeKind => (NOTICE_KINDS as readonly string[]).includes(value);
export const isNoticeLocale = (value: string): value is NoticeLocale => (NOTICE_LOCALES as readonly string[]).includes(value);

/** French speakers get fr-CA; everyone else en-US. Accepts "fr", "fr-CA", "fr_FR", a Locale, or nothing. */
export function noticeLocale(locale: Locale | string | undefined): NoticeLocale {
  const language = typeof locale === "string" ? locale.slice(0, 2) : locale?.language;
  return language?.toLowerCase() === "fr" ? "fr-CA" : "en-US";
}

/** Fills `{company}` and `{contact}`; unknown placeholders stay as written. */
export function renderTemplate(text: string, values: NoticeValues): string {
  return fillPlaceholders(text, { company: values.company, contact: values.contact });
}

/** The wording of each notice: a company's overrides, else the defaults. */
@injectable()
export class NoticeTemplates {
  readonly #overrides: Collection<TemplateOverride>;

  constructor(
    @inject(STORAGE) storage: Storage,
    @inject(CLOCK) private readonly clock: Clock,
  ) {
    this.#overrides = storage.collection(TEMPLATES);
  }

  async text(companyId: string, locale: NoticeLocale, kind: NoticeKind): Promise<string> {
    const override = await this.#overrides.get(overrideId(companyId, locale, kind));
    return override?.text ?? DEFAULT_TEMPLATES[locale][kind];
  }

  /** Sets a company's wording of one notice in one locale. */
  async set(companyId: string, locale: NoticeLocale, kind: NoticeKind, text: string): Promise<TemplateOverride> {
    const trimmed = text.trim();
    if (!trimmed) throw new RangeError("a template needs some text");
    if (trimmed.length > MAX_TEMPLATE_LENGTH) throw new RangeError(`a template has at most ${MAX_TEMPLATE_LENGTH} characters`);
    return this.#overrides.upsert({ id: overrideId(companyId, locale, kind), companyId, locale, kind, text: trimmed, updatedAt: this.clock.now() });
  }

  /** Goes back to the default wording; false when there was no override. */
  reset(companyId: string, locale: NoticeLocale, kind: NoticeKind): Promise<boolean> {
    return this.#overrides.delete(overrideId(companyId, locale, kind));
  }

  /** Every notice of a company in every locale, with whether it is the company's own wording. */
  async list(companyId: string): Promise<Array<{ locale: NoticeLocale; kind: NoticeKind; text: string; custom: boolean }>> {
    const overrides = new Map((await this.#overrides.find({ where: { companyId } })).items.map((o) => [o.id, o.text]));
    return NOTICE_LOCALES.flatMap((locale) =>
      NOTICE_KINDS.map((kind) => {
        const custom = overrides.get(overrideId(companyId, locale, kind));
        return { locale, kind, text: custom ?? DEFAULT_TEMPLATES[locale][kind], custom: custom !== undefined };
      }),
    );
  }
}

const overrideId = (companyId: string, locale: NoticeLocale, kind: NoticeKind) => `${companyId}:${locale}:${kind}`;
