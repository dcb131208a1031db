import * as v from "valibot";
import {
  defineRoute,
  formBody,
  isScope,
  type Accounts,
  type AnyRoute,
  type RequestContext,
  type RouteReply,
  type Scope,
} from "../../src/index.ts";
import type { AuthorizationCodes } from "./authorization-codes.ts";
import { parseCookies, serializeCookie } from "./cookies.ts";
import { FormCsrf } from "./form-csrf.ts";
import { consentPage, errorPage, loginPage, pageHeaders, type InstallParameters } from "./install-pages.ts";
import { consentDocs, installPageDocs, signInDocs } from "./openapi.ts";
import { throttledMessage, type SignIns } from "./sign-ins.ts";
import type { OAuthClients, ResolvedClient } from "./oauth-clients.ts";

export const INSTALL_PATH = "/integrations/oauth-install";
const LOGIN_PATH = `${INSTALL_PATH}/login`;
const SESSION_COOKIE = "rk_session";
const CSRF_COOKIE = "rk_csrf";
/** One message for every failed sign-in: it never tells whether the email exists. */
export const LOGIN_FAILED = "The email or password is incorrect.";
/**
 * The scope and state go back in redirects' Location headers (the state to the
 * client, both to the install page): bounded so that a Location header stays far
 * below what HTTP clients read (node's 16 KiB, many proxies' 8 KiB).
 */
export const MAX_ENCODED_PARAMETER_LENGTH = 2048;

export interface InstallRouteDependencies {
  clients: OAuthClients;
  signIns: SignIns;
  codes: AuthorizationCodes;
  accounts: Accounts;
  secret: string;
  /** The public URL of a path on the ui host. */
  uiUrl(path: string): string;
}

const optionalString = v.optional(v.string());
const installForm = {
  csrf_token: optionalString,
  client_id: optionalString,
  redirect_uri: optionalString,
  scope: optionalString,
  state: optionalString,
};

type ResolvedInstall = { kind: "ok"; client: ResolvedClient; parameters: InstallParameters };
type Resolved = { kind: "page"; reply: RouteReply } | ResolvedInstall;

interface LoginProblem {
  email?: string;
  error?: string;
  headers?: Record<string, string>;
}

/**
 * The install page of interface §5.3 on the ui host: `GET` shows the sign-in
 * form or the consent page, the two `POST`s sign in and answer the consent.
 * Plain HTML forms, no script; every form carries a CSRF token tied to a cookie.
 */
export function installRoutes(dependencies: InstallRouteDependencies): AnyRoute[] {
  const { clients, signIns, codes, accounts, secret, uiUrl } = dependencies;
  // Forms post to, and redirects go to, paths of the origin the page was opened on (`form-action 'self'`):
  // the public URL's origin may not be the one in the browser's address bar (a proxy, another host name).
  const uiPath = (path: string) => new URL(uiUrl(path)).pathname;
  const installPath = uiPath(INSTALL_PATH);
  const secure = uiUrl("").startsWith("https:");
  const csrf = new FormCsrf(secret, "reachkit oauth-install csrf", { name: CSRF_COOKIE, path: installPath, secure });
  const csrfValid = (context: RequestContext, token: string | undefined) => csrf.valid(context, token);

  /** The signed-in user of a live session, with their company; undefined when either is gone. */
  async function signedIn(context: RequestContext) {
    const user = await signIns.signedIn(parseCookies(context.headers.cookie).get(SESSION_COOKIE));
    const company = user && (await accounts.getCompany(user.companyId));
    return company && user ? { company, user } : undefined;
  }

  /** Checks the client and its redirect URI. Any problem is an error page: never a redirect to an unchecked URI. */
  async function resolveClient(raw: Record<string, unknown>): Promise<Resolved> {
    const parameters: Partial<Record<keyof InstallParameters, string>> = {};
    for (const name of ["client_id", "redirect_uri", "scope", "state"] as const) {
      const value = raw[name];
      if (value === undefined) continue;
      if (typeof value !== "string") return failure(400, "Invalid install link", `The install link gives ${name} more than once.`);
      parameters[name] = value;
    }
    // client_id and redirect_uri must match registered values, which are bounded already.
    for (const name of ["scope", "state"] as const) {
      if (encodeURIComponent(parameters[name] ?? "").length > MAX_ENCODED_PARAMETER_LENGTH) {
        return failure(400, "Invalid install link", `The ${name} of this install link is longer than ${MAX_ENCODED_PARAMETER_LENGTH} characters once URL-encoded.`);
      }
    }
    if (!parameters.client_id) return failure(400, "Invalid install link", "The install link has no client_id.");
    const client = await clients.find(parameters.client_id);
    if (!client) return failure(400, "Unknown application", "No application has the client_id of this install link.");
    if (!parameters.redirect_uri) return failure(400, "Invalid install link", "The install link has no redirect_uri.");
    if (!client.client.redirectUris.includes(parameters.redirect_uri)) {
      return failure(400, "Invalid install link", `The redirect_uri of this install link is not registered for ${client.application.name}.`);
    }
    return { kind: "ok", client, parameters: parameters as InstallParameters };
  }

  /** The requested scopes; none requested means every scope of the application. */
  function requestedScopes(client: ResolvedClient, parameters: InstallParameters): Scope[] | "invalid" {
    const names = (parameters.scope ?? "").split(/[\s,]+/).filter(Boolean);
    if (names.length === 0) return [...client.application.scopes];
    const allowed = client.application.scopes as readonly string[];
    if (!names.every((name) => isScope(name) && allowed.includes(name))) return "invalid";
    return [...new Set(names)] as Scope[];
  }

  /** An HTML page with a form: its CSRF token, and the cookie it is tied to when the browser has none yet. */
  function formPage(context: RequestContext, status: number, render: (csrfToken: string) => string, headers: Record<string, string>): RouteReply {
    const issued = csrf.issue(context);
    return htmlReply(status, render(issued.token), { ...headers, ...(issued.setCookie ? { "set-cookie": issued.setCookie } : {}) });
  }

  function showLogin(context: RequestContext, resolved: ResolvedInstall, status: number, problem: LoginProblem = {}): RouteReply {
    const render = (csrfToken: string) =>
      loginPage({
        action: uiPath(LOGIN_PATH),
        applicationName: resolved.client.application.name,
        parameters: resolved.parameters,
        csrfToken,
        email: problem.email,
        error: problem.error,
      });
    return formPage(context, status, render, { ...pageHeaders(), ...problem.headers });
  }

  return [
    defineRoute({
      method: "GET",
      path: INSTALL_PATH,
      host: "ui",
      auth: { kind: "none" },
      summary: "Show the install page",
      docs: installPageDocs,
      async handler(context) {
        const resolved = await resolveClient(context.query);
        if (resolved.kind === "page") return resolved.reply;
        const scopes = requestedScopes(resolved.client, resolved.parameters);
        if (scopes === "invalid") return invalidScope(resolved.parameters);
        const signedInAs = await signedIn(context);
        if (!signedInAs) return showLogin(context, resolved, 200);
        const { company, user } = signedInAs;
        if (user.role !== "owner") return ownersOnly();
        const render = (csrfToken: string) =>
          consentPage({
            action: installPath,
            applicationName: resolved.client.application.name,
            companyName: company.name,
            userEmail: user.email,
            scopes,
            parameters: resolved.parameters,
            csrfToken,
          });
        return formPage(context, 200, render, pageHeaders(resolved.parameters.redirect_uri));
      },
    }),
    defineRoute({
      method: "POST",
      path: LOGIN_PATH,
      host: "ui",
      auth: { kind: "none" },
      body: formBody(v.object({ ...installForm, email: optionalString, password: optionalString })),
      summary: "Sign in on the install page",
      docs: signInDocs,
      async handler(context) {
        const { body } = context;
        if (!csrfValid(context, body.csrf_token)) return forbiddenForm();
        const resolved = await resolveClient(body);
        if (resolved.kind === "page") return resolved.reply;
        const outcome = await signIns.attempt({ email: body.email ?? "", password: body.password ?? "", address: context.remoteAddress ?? "unknown" });
        if (outcome.kind === "throttled") {
          const headers = { "retry-after": String(outcome.retryAfterSeconds) };
          return showLogin(context, resolved, 429, { email: outcome.email, error: throttledMessage(outcome.retryAfterSeconds), headers });
        }
        if (outcome.kind === "failed") return showLogin(context, resolved, 401, { email: outcome.email, error: LOGIN_FAILED });
        const cookie = serializeCookie(SESSION_COOKIE, outcome.token, { path: installPath, secure, maxAge: Math.floor(signIns.sessions.ttlMs / 1000) });
        return { status: 303, redirect: installUrl(resolved.parameters), headers: { ...pageHeaders(), "set-cookie": cookie } };
      },
    }),
    defineRoute({
      method: "POST",
      path: INSTALL_PATH,
      host: "ui",
      auth: { kind: "none" },
      body: formBody(v.object({ ...installForm, decision: optionalString })),
      summary: "Answer the consent page",
      docs: consentDocs,
      async handler(context) {
        const { body } = context;
        if (!csrfValid(context, body.csrf_token)) return forbiddenForm();
        const resolved = await resolveClient(body);
        if (resolved.kind === "page") return resolved.reply;
        const { client, parameters } = resolved;
        const signedInAs = await signedIn(context);
        if (!signedInAs) return { status: 303, redirect: installUrl(parameters), headers: pageHeaders() };
        const scopes = requestedScopes(client, parameters);
        if (scopes === "invalid") return invalidScope(parameters);
        if (signedInAs.user.role !== "owner") return ownersOnly();
        if (body.decision === "cancel") return redirectToClient(parameters, { error: "access_denied" });
        if (body.decision !== "authorize") return failure(400, "Invalid answer", "Choose Authorize or Cancel on the install page.").reply;
        const code = await codes.issue({
          companyId: signedInAs.company.id,
          applicationId: client.application.id,
          clientId: client.client.clientId,
          redirectUri: parameters.redirect_uri,
          scopes,
          userId: signedInAs.user.id,
        });
        // Both names: clients read `code` (RFC 6749) or `authorizationCode` (the reference service's demo).
        return redirectToClient(parameters, { code, authorizationCode: code });
      },
    }),
  ];

  /** The install page's path and query, for a redirect that stays on the origin the browser is on. */
  function installUrl(parameters: InstallParameters): string {
    const query = new URLSearchParams();
    for (const [name, value] of Object.entries(parameters)) if (value !== undefined) query.set(name, value);
    return `${installPath}?${query}`;
  }
}

function htmlReply(status: number, html: string, headers: Record<string, string>): RouteReply {
  return { status, html, headers };
}

function failure(status: number, title: string, message: string): Extract<Resolved, { kind: "page" }> {
  return { kind: "page", reply: htmlReply(status, errorPage(title, message), pageHeaders()) };
}

/** Installing grants an application access to the company's data: a change, which viewers may not make. */
function ownersOnly(): RouteReply {
  return failure(403, "Only an owner can install", "You are signed in as a viewer of the company. Ask an owner of the company to install this application.").reply;
}

function forbiddenForm(): RouteReply {
  return failure(403, "Form expired", "This form could not be verified (its security token is missing or out of date). Go back, reload the page and try again.").reply;
}

const invalidScope = (parameters: InstallParameters) =>
  redirectToClient(parameters, { error: "invalid_scope", error_description: "a requested scope is unknown or not granted to this application" });

/** Redirects to the checked redirect URI with these parameters and the state, unchanged. */
function redirectToClient(parameters: InstallParameters, query: Record<string, string>): RouteReply {
  const url = new URL(parameters.redirect_uri);
  for (const [name, value] of Object.entries(query)) url.searchParams.set(name, value);
  if (parameters.state !== undefined) url.searchParams.set("state", parameters.state);
  return { status: 303, redirect: url.toString(), headers: { "cache-control": "no-store", "referrer-policy": "no-referrer" } };
}
