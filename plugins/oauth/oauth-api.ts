import { inject, injectable, PUBLIC_URL, type PublicUrl } from "../../src/index.ts";
import type { DashboardUsers } from "./dashboard-users.ts";
import type { IdTokens } from "./id-tokens.ts";
import { INSTALL_PATH } from "./install-routes.ts";
import type { Installations } from "./installations.ts";
import type { OAuthClients } from "./oauth-clients.ts";
import type { OAuthApi } from "./oauth-plugin.ts";
import { DASHBOARD_USERS_SERVICE, ID_TOKENS, INSTALLATIONS_SERVICE, OAUTH_CLIENTS_SERVICE } from "./tokens.ts";

/** The OAuth plugin's in-process service, bound on `OAUTH_API`. */
@injectable()
export class OAuthService implements OAuthApi {
  constructor(
    @inject(OAUTH_CLIENTS_SERVICE) readonly applications: OAuthClients,
    @inject(DASHBOARD_USERS_SERVICE) readonly users: DashboardUsers,
    @inject(INSTALLATIONS_SERVICE) readonly installations: Installations,
    @inject(ID_TOKENS) readonly idTokens: IdTokens,
    @inject(PUBLIC_URL) private readonly publicUrl: PublicUrl,
  ) {}

  installUrl({ clientId, redirectUri, scopes, state }: Parameters<OAuthApi["installUrl"]>[0]): string {
    const url = new URL(this.publicUrl("ui", INSTALL_PATH));
    url.searchParams.set("client_id", clientId);
    url.searchParams.set("redirect_uri", redirectUri);
    if (scopes && scopes.length > 0) url.searchParams.set("scope", scopes.join(" "));
    if (state !== undefined) url.searchParams.set("state", state);
    return url.toString();
  }
}
