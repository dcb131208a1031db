import * as v from "valibot";
import type { OpenApiSecurityScheme, ResponseDoc, RouteDocs } from "../../src/index.ts";

const TAG = "OAuth install";
/** The public application and the dashboard user of the examples (an operator creates the real ones). */
export const EXAMPLE_CLIENT_ID = "rk_cid_4f0Yx2mQ8b";
export const EXAMPLE_CLIENT_SECRET = "rk_cs_Jq3VYz8pX1cN5rT0wLmK7hA2sD9fG4eB6uI1oP3aQ5s";
export const EXAMPLE_REDIRECT_URI = "https://app.example/oauth/callback";
export const EXAMPLE_USER = { email: "owner@acme.example", password: "correct horse battery" };
/** The form's CSRF token in the examples: the install page's form carries the real one. */
export const EXAMPLE_CSRF_TOKEN = "Qm9vdHN0cmFwLWNzcmYtdG9rZW4tZXhhbXBsZS12YWx1ZQ";
const CODE = "rk_code_Xy7fP2kQ9mN4vB1cT6wL0sR3";
const STATE = "af0ifjsldkj";

const installQuery = { client_id: EXAMPLE_CLIENT_ID, redirect_uri: EXAMPLE_REDIRECT_URI, state: STATE };
const installForm = { csrf_token: EXAMPLE_CSRF_TOKEN, ...installQuery };

export const SESSION_SCHEME: OpenApiSecurityScheme = {
  type: "apiKey",
  in: "cookie",
  name: "rk_session",
  description: "A dashboard user's sign-in on the install page (set by the sign-in form).",
};
const page = (description: string): ResponseDoc => ({ description, html: true });
const redirect = (description: string, location: string): ResponseDoc => ({ description, headers: { location: { description: "Where the browser goes next", example: location } } });
const formErrors = {
  400: page("An invalid install link (unknown client_id, an unregistered redirect_uri...): an error page"),
  403: page("The form's CSRF token is missing or out of date, or the signed-in user is a viewer (only owners install): an error page"),
};

export const installPageDocs: RouteDocs = {
  operationId: "showInstallPage",
  tag: TAG,
  description:
    "The install page a public application sends its user to: the sign-in form, or, once signed in, the consent page for the application's scopes. " +
    "It never redirects to a redirect_uri the application did not register.",
  query: v.object({
    client_id: v.string(),
    redirect_uri: v.pipe(v.string(), v.description("One of the application's registered redirect URIs")),
    scope: v.optional(v.pipe(v.string(), v.description("Space-separated; default every scope of the application"))),
    state: v.optional(v.pipe(v.string(), v.description("Returned unchanged in the redirect (recommended against CSRF)"))),
  }),
  responses: { 200: page("The sign-in form, or the consent page"), ...formErrors, 303: redirect("A requested scope is not the application's: back to the client with error=invalid_scope", `${EXAMPLE_REDIRECT_URI}?error=invalid_scope&state=${STATE}`) },
  security: { schemes: { DashboardSession: SESSION_SCHEME }, optional: true },
  example: { query: installQuery },
};

export const signInDocs: RouteDocs = {
  operationId: "signInToInstall",
  tag: TAG,
  description: "The sign-in form of the install page. Failed sign-ins are limited per email and per address.",
  responses: {
    303: redirect("Signed in: back to the install page, which now asks for consent", `/integrations/oauth-install?client_id=${EXAMPLE_CLIENT_ID}`),
    ...formErrors,
    401: page("The email or password is incorrect: the form again"),
    429: { ...page("Too many failed sign-ins: the form again, with Retry-After"), headers: { "retry-after": { description: "Seconds to wait", example: "900" } } },
  },
  example: { body: { ...installForm, ...EXAMPLE_USER }, cookies: { rk_csrf: "Q3NyZkNvb2tpZUV4YW1wbGVWYWx1ZTEyMzQ1Njc4OTAxMjM" }, after: ["showInstallPage"] },
};

export const consentDocs: RouteDocs = {
  operationId: "answerInstall",
  tag: TAG,
  description: "The consent page's answer: Authorize redirects to the application with a code (valid two minutes), Cancel with error=access_denied.",
  responses: {
    303: redirect(
      "Back to the application: code and authorizationCode (the same code) and the state; or back to the sign-in when the session ended",
      `${EXAMPLE_REDIRECT_URI}?code=${CODE}&authorizationCode=${CODE}&state=${STATE}`,
    ),
    ...formErrors,
  },
  security: { schemes: { DashboardSession: SESSION_SCHEME } },
  example: { body: { ...installForm, decision: "authorize" }, after: ["showInstallPage", "signInToInstall"] },
};

const oauthError = v.object({
  error: v.picklist(["invalid_request", "invalid_client", "invalid_grant", "unauthorized_client", "unsupported_grant_type", "invalid_scope"]),
  error_description: v.string(),
});

export function tokenDocs(issuedTokens: { name: string; scheme: OpenApiSecurityScheme }): RouteDocs {
  return {
    operationId: "createTokenViaAuthorizationCode",
    tag: TAG,
    description:
      "Exchanges an authorization code for the install's access token (it does not expire; one per application and company) and an id_token. " +
      "Client credentials go in the form or as HTTP Basic. Errors use the OAuth 2.0 shape `{error, error_description}`.",
    requestBody: {
      contentType: "application/x-www-form-urlencoded",
      schema: v.object({
        grant_type: v.literal("authorization_code"),
        code: v.string(),
        redirect_uri: v.pipe(v.string(), v.description("The redirect URI the code was issued for")),
        client_id: v.optional(v.string()),
        client_secret: v.optional(v.string()),
      }),
    },
    responses: {
      200: {
        description: "The access token",
        schema: v.object({ access_token: v.string(), id_token: v.pipe(v.string(), v.description("A signed JWT naming the company and application")), token_type: v.literal("Bearer") }),
        example: { access_token: "rk_oat_3lQm9Yt0cVb7nXk2Pz5wRf8sDg1hJa4e6uIo0pLq2r", id_token: "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiI1ZGVlIn0.c2ln", token_type: "Bearer" },
      },
      400: { description: "invalid_request, invalid_grant (an unknown, used or expired code), unsupported_grant_type...", schema: oauthError },
      401: { description: "invalid_client, when the credentials came as HTTP Basic", schema: oauthError },
    },
    security: { schemes: { ClientCredentials: { type: "http", scheme: "basic", description: "client_id and client_secret as HTTP Basic, instead of in the form" } }, optional: true },
    issuesApiTokens: issuedTokens,
    example: {
      body: { grant_type: "authorization_code", code: CODE, redirect_uri: EXAMPLE_REDIRECT_URI, client_id: EXAMPLE_CLIENT_ID, client_secret: EXAMPLE_CLIENT_SECRET },
      after: ["showInstallPage", "signInToInstall", "answerInstall"],
    },
  };
}
