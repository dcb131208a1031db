import type { Readable } from "node:stream";
import {
  decodeUtf8,
  defineRoute,
  HttpError,
  mediaType,
  parseFormText,
  rawBody,
  readLimited,
  reply,
  type Accounts,
  type AnyRoute,
  type OpenApiSecurityScheme,
  type RequestContext,
  type RouteReply,
} from "../../src/index.ts";
import { OAuthError, type AuthorizationCodes } from "./authorization-codes.ts";
import type { IdTokens } from "./id-tokens.ts";
import type { OAuthClients } from "./oauth-clients.ts";
import { tokenDocs } from "./openapi.ts";

export const TOKEN_PATH = "/v1/authorization-codes/tokens";
const FORM = "application/x-www-form-urlencoded";
/** RFC 6749 §5.1: token responses are never cached. */
const NO_STORE = { "cache-control": "no-store", pragma: "no-cache" };

export interface TokenEndpointDependencies {
  clients: OAuthClients;
  codes: AuthorizationCodes;
  idTokens: IdTokens;
  accounts: Accounts;
  bodyLimitBytes: number;
  /** The OpenAPI scheme of the tokens it issues (its URLs depend on the kit's hosts). */
  issuedTokens: { name: string; scheme: OpenApiSecurityScheme };
}

/**
 * `POST /v1/authorization-codes/tokens` (interface §4.3). Its errors use the
 * OAuth 2.0 shape `{"error", "error_description"}` (RFC 6749 §5.2) rather than
 * the kit's JSON error, which is why it reads its own form body.
 */
export function tokenEndpoint(dependencies: TokenEndpointDependencies): AnyRoute {
  return defineRoute({
    method: "POST",
    path: TOKEN_PATH,
    auth: { kind: "none" },
    body: rawBody(),
    summary: "Exchange an authorization code for a token",
    docs: tokenDocs(dependencies.issuedTokens),
    async handler(context) {
      try {
        return await exchange(context, dependencies);
      } catch (error) {
        if (error instanceof OAuthError) return oauthError(error);
        if (error instanceof HttpError && error.status < 500) {
          return oauthError(new OAuthError("invalid_request", error.message, error.status === 413 ? 413 : 400));
        }
        throw error;
      }
    },
  });
}

async function exchange(context: RequestContext<Readable>, { clients, codes, idTokens, accounts, bodyLimitBytes }: TokenEndpointDependencies): Promise<RouteReply> {
  if (mediaType(context.header("content-type")) !== FORM) {
    context.body.resume();
    throw new OAuthError("invalid_request", `Content-Type must be ${FORM}`);
  }
  const form = parseFormText(decodeUtf8(await readLimited(context.body, bodyLimitBytes)));
  const basic = basicCredentials(context.header("authorization"));
  const clientId = basic?.clientId ?? form.client_id;
  const clientSecret = basic?.clientSecret ?? form.client_secret;
  if (!form.grant_type) throw new OAuthError("invalid_request", "grant_type is required");
  if (form.grant_type !== "authorization_code") throw new OAuthError("unsupported_grant_type", "grant_type must be authorization_code");
  if (!clientId || !clientSecret) throw new OAuthError("invalid_client", "client_id and client_secret are required", basic ? 401 : 400);
  const client = await clients.authenticate(clientId, clientSecret);
  if (!client) throw new OAuthError("invalid_client", "unknown client or wrong client secret", basic ? 401 : 400);
  for (const field of ["code", "redirect_uri"] as const) {
    if (!form[field]) throw new OAuthError("invalid_request", `${field} is required`);
  }
  const { token, grant } = await codes.redeem({
    code: form.code!,
    clientId: client.client.clientId,
    redirectUri: form.redirect_uri!,
    allowedScopes: client.application.scopes,
  });
  const company = await accounts.getCompany(grant.companyId);
  const idToken = await idTokens.sign({
    sub: grant.companyId,
    aud: client.client.clientId,
    company_id: grant.companyId,
    company_name: company?.name ?? "",
    company_domain: company?.domain ?? "",
    application_id: client.application.id,
    application_name: client.application.name,
    scope: grant.scopes.join(" "),
  });
  return reply.json(200, { access_token: token, id_token: idToken, token_type: "Bearer" }, NO_STORE);
}

function oauthError(error: OAuthError): RouteReply {
  const headers: Record<string, string> = { ...NO_STORE };
  if (error.status === 401) headers["www-authenticate"] = 'Basic realm="reachkit"';
  return reply.json(error.status, { error: error.error, error_description: error.description }, headers);
}

/** Client credentials from `Authorization: Basic` (RFC 6749 §2.3.1: form-encoded, then base64). */
function basicCredentials(header: string | undefined): { clientId: string; clientSecret: string } | undefined {
  const match = header && /^Basic +([A-Za-z0-9+/=]+) *$/i.exec(header);
  if (!match) return undefined;
  const decoded = Buffer.from(match[1]!, "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  if (colon === -1) return undefined;
  try {
    return { clientId: decodeURIComponent(decoded.slice(0, colon)), clientSecret: decodeURIComponent(decoded.slice(colon + 1)) };
  } catch {
    return undefined;
  }
}
