import * as v from "valibot";
import {
  defineRoute,
  formBody,
  HttpError,
  InvalidCursorError,
  safeEqual,
  sign,
  type Accounts,
  type AnyRoute,
  type RequestContext,
  type RouteDocs,
  type RouteReply,
} from "../../src/index.ts";
import { parseCookies, serializeCookie, type SignIns } from "../oauth/index.ts";
import { html } from "./html.ts";
import { consolePage, pageHeaders, type Page, type SectionId, type Viewer } from "./layout.ts";

export const SESSION_COOKIE = "rk_console";

/** What every console route needs. */
export interface ConsoleDeps {
  signIns: SignIns;
  accounts: Accounts;
  secret: string;
  /** The console's path on the ui host (`/console`, with any mount prefix). */
  base: string;
  /** Cookies get `Secure` when the ui host is served over TLS. */
  secure: boolean;
  sections: readonly SectionId[];
}

/** Where a page or an action sends the browser instead of showing a page. */
export interface Redirect {
  redirect: string;
}

export type Outcome = Page | Redirect;

/** The fields of a posted form: every field a string, read and checked by the action itself. */
export type Form = Readonly<Record<string, string>>;

// An empty body is a form without fields (refused below for its missing token), not a malformed request.
const formFields = formBody(v.optional(v.record(v.string(), v.string()), {}));

/** The session cookie of a sign-in, or the one that clears it (maxAge 0). */
export function sessionCookie(deps: ConsoleDeps, token: string, maxAgeSeconds: number): string {
  return serializeCookie(SESSION_COOKIE, token, { path: deps.base, secure: deps.secure, maxAge: maxAgeSeconds });
}

export const sessionTokenOf = (context: RequestContext) => parseCookies(context.headers.cookie).get(SESSION_COOKIE);

/** The form token of a session: only a page of this session knows it (the session cookie is HttpOnly). */
const csrfTokenOf = (deps: ConsoleDeps, sessionToken: string) => sign(deps.secret, "reachkit console csrf", sessionToken);

/** The signed-in viewer of a request; undefined when the session, the user or the company is gone. */
export async function viewerOf(deps: ConsoleDeps, context: RequestContext): Promise<Viewer | undefined> {
  const token = sessionTokenOf(context);
  const user = await deps.signIns.signedIn(token);
  const company = user && (await deps.accounts.getCompany(user.companyId));
  if (!user || !company || !token) return undefined;
  return { user, company, csrfToken: csrfTokenOf(deps, token), base: deps.base, sections: deps.sections };
}

/** A query parameter's text (the first when repeated), trimmed; undefined when absent or empty. */
export function queryText(context: RequestContext, name: string): string | undefined {
  const raw = (context.query as Record<string, string | string[] | undefined>)[name];
  const value = (Array.isArray(raw) ? raw[0] : raw)?.trim();
  return value ? value : undefined;
}

export function htmlPage(viewer: Viewer, page: Page): RouteReply {
  return { status: page.status ?? 200, html: consolePage(viewer, page), headers: pageHeaders(page.connectTo) };
}

export function errorPage(viewer: Viewer, section: SectionId, status: number, title: string, message: string, details: readonly { path: string; message: string }[] = []): RouteReply {
  const body = html`<h1>${title}</h1>
<p class="alert" role="alert">${message}</p>
${details.length > 0 ? html`<ul>${details.map((detail) => html`<li><code>${detail.path}</code>: ${detail.message}</li>`)}</ul>` : ""}
<p><a href="${viewer.base}${section === "overview" ? "" : `/${section}`}">Back</a></p>`;
  return htmlPage(viewer, { title, section, body, status });
}

const toSignIn = (deps: ConsoleDeps, context: RequestContext): RouteReply => {
  const next = context.method === "GET" ? `?next=${encodeURIComponent(context.path.slice(0, 500))}` : "";
  return { status: 303, redirect: `${deps.base}/sign-in${next}`, headers: { "cache-control": "no-store" } };
};

/** A service's refusal (404 for another company's id, 400 naming the fields) as a page in the console. */
function refusalPage(viewer: Viewer, section: SectionId, error: unknown): RouteReply {
  if (error instanceof InvalidCursorError) return errorPage(viewer, section, 400, "Page link out of date", "This page link no longer fits the list: start again from its first page.");
  if (!(error instanceof HttpError) || error.status >= 500) throw error;
  if (error.status === 404) return errorPage(viewer, section, 404, "Not found", "There is nothing here: it may have been deleted, or the link is wrong.");
  return errorPage(viewer, section, error.status, "Not done", error.message, error.details);
}

function outcomeReply(viewer: Viewer, outcome: Outcome): RouteReply {
  return "redirect" in outcome ? { status: 303, redirect: outcome.redirect, headers: { "cache-control": "no-store" } } : htmlPage(viewer, outcome);
}

export interface PageSpec {
  path: string;
  section: SectionId;
  summary: string;
  docs: RouteDocs;
  render(viewer: Viewer, context: RequestContext): Promise<Outcome>;
}

/** A page of the signed-in console (GET); not signed in, the browser goes to the sign-in page. */
export function pageRoute(deps: ConsoleDeps, spec: PageSpec): AnyRoute {
  return defineRoute({
    method: "GET",
    path: `/console${spec.path}`,
    host: "ui",
    auth: { kind: "none" },
    summary: spec.summary,
    docs: spec.docs,
    async handler(context) {
      const viewer = await viewerOf(deps, context);
      if (!viewer) return toSignIn(deps, context);
      try {
        return outcomeReply(viewer, await spec.render(viewer, context));
      } catch (error) {
        return refusalPage(viewer, spec.section, error);
      }
    },
  });
}

export interface ActionSpec {
  path: string;
  section: SectionId;
  summary: string;
  docs: RouteDocs;
  /** owner: only owners may (every change but signing out). */
  role: "owner" | "any";
  run(viewer: Viewer, form: Form, context: RequestContext): Promise<Outcome>;
}

/**
 * An action of the signed-in console (a form POST): refused with 403 unless
 * the form carries this session's token, and unless the user's role allows it.
 */
export function actionRoute(deps: ConsoleDeps, spec: ActionSpec): AnyRoute {
  return defineRoute({
    method: "POST",
    path: `/console${spec.path}`,
    host: "ui",
    auth: { kind: "none" },
    body: formFields,
    summary: spec.summary,
    docs: spec.docs,
    async handler(context) {
      const viewer = await viewerOf(deps, context);
      if (!viewer) return toSignIn(deps, context);
      const form = context.body;
      if (!safeEqual(viewer.csrfToken, form.csrf_token ?? "")) {
        return errorPage(viewer, spec.section, 403, "Form expired", "This form could not be verified (its security token is missing or out of date). Reload the page and try again.");
      }
      if (spec.role === "owner" && viewer.user.role !== "owner") {
        return errorPage(viewer, spec.section, 403, "Not allowed", "Only an owner of the company can make this change. Ask an owner, or to be made one.");
      }
      try {
        return outcomeReply(viewer, await spec.run(viewer, form, context));
      } catch (error) {
        return refusalPage(viewer, spec.section, error);
      }
    },
  });
}
