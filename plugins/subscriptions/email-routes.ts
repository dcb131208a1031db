import type { Readable } from "node:stream";
import * as v from "valibot";
import { defineRoute, rawBody, readLimited, reply, type Accounts, type AnyRoute, type RouteDocs, type RouteReply } from "../../src/index.ts";
import { CONFIRM_EMAIL_PATH, UNSUBSCRIBE_EMAIL_PATH, type EmailLinkCheck, type EmailLinkClaims, type EmailLinkPurpose, type EmailLinks } from "./email-links.ts";
import { alreadyConfirmedPage, confirmedPage, linkProblemPage, unsubscribedPage, unsubscribePromptPage } from "./email-pages.ts";
import type { SubscriptionsService } from "./subscriptions-service.ts";

/** A one-click POST carries `List-Unsubscribe=One-Click` (RFC 8058), as a form or a multipart form: far less than this. */
const ONE_CLICK_BODY_LIMIT = 8 * 1024;

/** Stands for a real link's token in the API reference's examples (a link of the examples' company, jane@example.com, MARKETING). */
export const EXAMPLE_CONFIRM_TOKEN = "eyJwIjoiY29uZmlybSJ9.example-confirmation-signature";
export const EXAMPLE_UNSUBSCRIBE_TOKEN = "eyJwIjoidW5zdWJzY3JpYmUifQ.example-unsubscribe-signature";

const tokenQuery = v.object({ token: v.pipe(v.string(), v.description("The signed token of the link, as the email gave it")) });
const page = (description: string) => ({ description, html: true });
const LINK_PROBLEMS = {
  400: page("The link is not valid (altered, cut short, or made for another purpose)"),
  404: page("The link is about a subscription or company that no longer exists"),
} as const;

const confirmDocs: RouteDocs = {
  operationId: "confirmEmailSubscription",
  tag: "Email links",
  description:
    "The link of a double opt-in's confirmation email: opening it makes the pending email subscription active. " +
    "It works for the subscriptions plugin's `emailConfirmationTtlMs` (7 days by default) from the email.",
  query: tokenQuery,
  responses: {
    200: page("Confirmed (or confirmed already)"),
    ...LINK_PROBLEMS,
    410: page("The link has expired: sign up again for a new one"),
  },
  example: { query: { token: EXAMPLE_CONFIRM_TOKEN }, after: ["addSubscriptions"] },
};

const unsubscribePageDocs: RouteDocs = {
  operationId: "showEmailUnsubscribe",
  tag: "Email links",
  description: "The `List-Unsubscribe` link opened in a browser: a page asking to confirm, whose button sends the one-click POST. It changes nothing itself.",
  query: tokenQuery,
  responses: { 200: page("The question, with its button"), ...LINK_PROBLEMS },
  example: { query: { token: EXAMPLE_UNSUBSCRIBE_TOKEN }, after: ["addSubscriptions"] },
};

const unsubscribeDocs: RouteDocs = {
  operationId: "emailOneClickUnsubscribe",
  tag: "Email links",
  description:
    "One-click unsubscribe (RFC 8058): the mailbox provider POSTs `List-Unsubscribe=One-Click` to the `List-Unsubscribe` URL of a subscriber email, " +
    "and the address is unsubscribed from that email's subscription type at once. No credentials: the token speaks for one address, type and company.",
  query: tokenQuery,
  requestBody: { contentType: "application/x-www-form-urlencoded", schema: v.object({ "List-Unsubscribe": v.literal("One-Click") }) },
  responses: { 200: page("Unsubscribed (or unsubscribed already)"), ...LINK_PROBLEMS },
  example: { query: { token: EXAMPLE_UNSUBSCRIBE_TOKEN }, body: { "List-Unsubscribe": "One-Click" }, after: ["addSubscriptions"] },
};

/**
 * The routes behind the links of the plugin's emails. No credentials: each
 * link's token is signed with the kit secret and names the company, so one
 * company's link never acts on another's subscribers. A bad link answers a page.
 */
export function emailLinkRoutes(service: SubscriptionsService, links: EmailLinks, accounts: Accounts): AnyRoute[] {
  /** The link's claims and its company's name, or the page that says what is wrong with it. */
  async function open(query: Record<string, string | string[]>, purpose: EmailLinkPurpose): Promise<{ claims: EmailLinkClaims; company: string } | RouteReply> {
    const check: EmailLinkCheck = links.check(typeof query.token === "string" ? query.token : undefined, purpose);
    if (!check.valid) {
      return check.problem === "expired"
        ? reply.html(410, linkProblemPage("This link has expired", "Confirmation links work for a limited time. Sign up again to get a new one."))
        : reply.html(400, linkProblemPage("This link is not valid", "It may have been cut short or changed. Open the link from the email again."));
    }
    const company = await accounts.getCompany(check.claims.companyId);
    if (!company) return reply.html(404, linkProblemPage("Nothing to do", "This link is about a company that no longer exists."));
    return { claims: check.claims, company: company.name };
  }

  return [
    defineRoute({
      method: "GET",
      path: CONFIRM_EMAIL_PATH,
      host: "ui",
      auth: { kind: "none" },
      summary: "Confirm an email subscription",
      docs: confirmDocs,
      async handler({ query }) {
        const link = await open(query, "confirm");
        if ("status" in link) return link;
        const outcome = await service.confirmEmail(link.claims);
        if (outcome === "gone") return reply.html(404, linkProblemPage("Nothing to confirm", "There is no subscription waiting for this confirmation any more."));
        return reply.html(200, (outcome === "confirmed" ? confirmedPage : alreadyConfirmedPage)(link.company, link.claims.email));
      },
    }),
    defineRoute({
      method: "GET",
      path: UNSUBSCRIBE_EMAIL_PATH,
      host: "ui",
      auth: { kind: "none" },
      summary: "Show the unsubscribe page of an email link",
      docs: unsubscribePageDocs,
      async handler({ query, path }) {
        const link = await open(query, "unsubscribe");
        if ("status" in link) return link;
        return reply.html(200, unsubscribePromptPage(link.company, link.claims.email, `${path.split("/").pop()}?token=${query.token as string}`));
      },
    }),
    defineRoute({
      method: "POST",
      path: UNSUBSCRIBE_EMAIL_PATH,
      host: "ui",
      auth: { kind: "none" },
      body: rawBody(),
      summary: "Unsubscribe an email in one click (RFC 8058)",
      docs: unsubscribeDocs,
      async handler({ query, body }) {
        // The body only says "List-Unsubscribe=One-Click": the token is what counts. Read (bounded) so the connection stays usable.
        await readLimited(body as Readable, ONE_CLICK_BODY_LIMIT);
        const link = await open(query, "unsubscribe");
        if ("status" in link) return link;
        await service.unsubscribeEmail(link.claims);
        return reply.html(200, unsubscribedPage(link.company, link.claims.email));
      },
    }),
  ];
}
