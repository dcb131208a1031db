import * as v from "valibot";
import { defineRoute, formBody, safeEqual, type AnyRoute, type RequestContext, type RouteReply } from "../../src/index.ts";
import { EXAMPLE_USER, FormCsrf, LOGIN_FAILED, throttledMessage } from "../oauth/index.ts";
import { queryText, sessionCookie, sessionTokenOf, viewerOf, type ConsoleDeps } from "./console-routes.ts";
import { CONSOLE_SESSION, EXAMPLE_CSRF_TOKEN } from "./docs.ts";
import { hidden, pageHeaders, publicPage } from "./layout.ts";
import { html } from "./html.ts";

const CSRF_COOKIE = "rk_console_csrf";
const optionalString = v.optional(v.string());

const redirectTo = (location: string, headers: Record<string, string | string[]> = {}): RouteReply => ({
  status: 303,
  redirect: location,
  headers: { "cache-control": "no-store", ...headers },
});

/**
 * Sign-in, with the dashboard users, sessions and throttle of the OAuth plugin,
 * and sign-out. The session cookie is HttpOnly, SameSite=Lax, scoped to the
 * console's path, and Secure when the ui host is https.
 */
export function signInRoutes(deps: ConsoleDeps): AnyRoute[] {
  const csrf = new FormCsrf(deps.secret, "reachkit console sign-in csrf", { name: CSRF_COOKIE, path: deps.base, secure: deps.secure });

  /** Only a path of the console itself: never another site, nor another path of this one. */
  const nextPath = (next: string | undefined) =>
    next !== undefined && (next === deps.base || next.startsWith(`${deps.base}/`)) && !next.includes("//") && !next.includes("\\") ? next : deps.base;

  function form(context: RequestContext, status: number, input: { next?: string; email?: string; error?: string }, headers: Record<string, string> = {}): RouteReply {
    const issued = csrf.issue(context);
    const alert = input.error ? html`<p class="alert" role="alert" id="sign-in-error">${input.error}</p>` : "";
    const describedBy = input.error ? html` aria-describedby="sign-in-error"` : "";
    const body = html`<div class="card">
<h1>Sign in to the reachkit console</h1>
${alert}<form method="post" action="${deps.base}/sign-in" class="stack">
${hidden("csrf_token", issued.token)}${hidden("next", nextPath(input.next))}
<div><label for="email">Email</label>
<input type="email" id="email" name="email" autocomplete="username" required value="${input.email ?? ""}"${describedBy}></div>
<div><label for="password">Password</label>
<input type="password" id="password" name="password" autocomplete="current-password" required${describedBy}></div>
<div><button type="submit">Sign in</button></div>
</form>
<p class="muted">The company's dashboard users sign in here (<code>reachkit dashboard-users create</code> makes one).</p>
</div>`;
    const cookie: Record<string, string> = issued.setCookie ? { "set-cookie": issued.setCookie } : {};
    return { status, html: publicPage(deps.base, "Sign in", body), headers: { ...pageHeaders(), ...headers, ...cookie } };
  }

  return [
    defineRoute({
      method: "GET",
      path: "/console/sign-in",
      host: "ui",
      auth: { kind: "none" },
      summary: "Show the console's sign-in form",
      docs: {
        operationId: "showConsoleSignIn",
        tag: "Console",
        description: "The console's sign-in form (or, signed in already, a redirect into the console). It sets the cookie its CSRF token is tied to.",
        query: v.object({ next: v.optional(v.pipe(v.string(), v.description("The console page to go to once signed in"))) }),
        responses: { 200: { description: "The sign-in form", html: true }, 303: { description: "Signed in already: into the console", headers: { location: { description: "The console", example: "/console" } } } },
        example: {},
      },
      async handler(context) {
        const next = queryText(context, "next");
        if (await viewerOf(deps, context)) return redirectTo(nextPath(next));
        return form(context, 200, { next });
      },
    }),
    defineRoute({
      method: "POST",
      path: "/console/sign-in",
      host: "ui",
      auth: { kind: "none" },
      body: formBody(v.object({ csrf_token: optionalString, email: optionalString, password: optionalString, next: optionalString })),
      summary: "Sign in to the console",
      docs: {
        operationId: "signInToConsole",
        tag: "Console",
        description: "Signs a dashboard user in (owner or viewer). Failed sign-ins are limited per email and per address, as on the install page, and counted with it.",
        responses: {
          303: { description: "Signed in: into the console (the page the form named)", headers: { location: { description: "The console page", example: "/console" } } },
          401: { description: "The email or password is incorrect: the form again", html: true },
          403: { description: "The form's CSRF token is missing or out of date: the form again", html: true },
          429: { description: "Too many failed sign-ins: the form again, with Retry-After", html: true, headers: { "retry-after": { description: "Seconds to wait", example: "900" } } },
        },
        example: { body: { csrf_token: EXAMPLE_CSRF_TOKEN, ...EXAMPLE_USER, next: "/console" }, after: ["showConsoleSignIn"] },
      },
      async handler(context) {
        const { body } = context;
        if (!csrf.valid(context, body.csrf_token)) {
          return form(context, 403, { next: body.next, email: body.email, error: "This form expired. Sign in again." });
        }
        const outcome = await deps.signIns.attempt({ email: body.email ?? "", password: body.password ?? "", address: context.remoteAddress ?? "unknown" });
        if (outcome.kind === "throttled") {
          return form(context, 429, { next: body.next, email: outcome.email, error: throttledMessage(outcome.retryAfterSeconds) }, { "retry-after": String(outcome.retryAfterSeconds) });
        }
        if (outcome.kind === "failed") return form(context, 401, { next: body.next, email: outcome.email, error: LOGIN_FAILED });
        const maxAge = Math.floor(deps.signIns.sessions.ttlMs / 1000);
        return redirectTo(nextPath(body.next), { "set-cookie": sessionCookie(deps, outcome.token, maxAge) });
      },
    }),
    defineRoute({
      method: "POST",
      path: "/console/sign-out",
      host: "ui",
      auth: { kind: "none" },
      body: formBody(v.optional(v.object({ csrf_token: optionalString }), {})),
      summary: "Sign out of the console",
      docs: {
        operationId: "signOutOfConsole",
        tag: "Console",
        description: "Ends the session (on the server: the cookie no longer signs anyone in) and clears the cookie. It needs the page's CSRF token, so another site cannot sign a user out.",
        responses: {
          303: { description: "Signed out: to the sign-in page", headers: { location: { description: "The sign-in page", example: "/console/sign-in" } } },
          403: { description: "The form's CSRF token is missing or out of date", html: true },
        },
        security: { schemes: { ConsoleSession: CONSOLE_SESSION } },
        example: { body: { csrf_token: EXAMPLE_CSRF_TOKEN }, after: ["showConsoleSignIn", "signInToConsole", "showConsoleOverview"] },
      },
      async handler(context) {
        const viewer = await viewerOf(deps, context);
        if (!viewer) return redirectTo(`${deps.base}/sign-in`, { "set-cookie": sessionCookie(deps, "", 0) });
        if (!safeEqual(viewer.csrfToken, context.body.csrf_token ?? "")) {
          return { status: 403, html: publicPage(deps.base, "Form expired", html`<div class="card"><h1>Form expired</h1><p class="alert" role="alert">This form could not be verified. Go back, reload the page and try again.</p></div>`), headers: pageHeaders() };
        }
        await deps.signIns.sessions.end(sessionTokenOf(context));
        return redirectTo(`${deps.base}/sign-in`, { "set-cookie": sessionCookie(deps, "", 0) });
      },
    }),
  ];
}
