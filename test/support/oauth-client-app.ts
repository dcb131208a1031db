import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** What the client application saw on one callback. */
export interface CallbackVisit {
  query: Record<string, string>;
  /** The state the client had stored in its own cookie before sending the user away. */
  expectedState?: string;
  outcome: "cancelled" | "state_mismatch" | "exchange_failed" | "installed";
  exchange?: { status: number; body: Record<string, unknown> };
  me?: { status: number; body: Record<string, unknown> };
}

export interface OAuthClientApp {
  /** `http://localhost:<port>`: another site than the kit's `127.0.0.1`, as a real client would be. */
  readonly url: string;
  readonly redirectUri: string;
  readonly visits: CallbackVisit[];
  /** Runs between receiving a code and exchanging it (the expiry test moves the kit's clock here). */
  beforeExchange: () => void;
  /** Where `/start` sends the browser, given the state it generated. */
  installUrl: (state: string) => string;
  configure(input: { kitUrl: string; clientId: string; clientSecret: string; installUrl: (state: string) => string }): void;
  close(): Promise<void>;
}

/**
 * A small public application, as a developer would write one: `/start` stores a
 * random state in its cookie and sends the browser to the install page;
 * `/callback` checks the state, exchanges the code from its backend, and calls
 * `/v1/me` with the token.
 */
export async function startOAuthClientApp(): Promise<OAuthClientApp> {
  let settings: { kitUrl: string; clientId: string; clientSecret: string } | undefined;
  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      response.writeHead(500, { "content-type": "text/plain" });
      response.end(String(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://localhost:${(server.address() as AddressInfo).port}`;

  const app: OAuthClientApp = {
    url,
    redirectUri: `${url}/callback`,
    visits: [],
    beforeExchange: () => undefined,
    installUrl: () => {
      throw new Error("configure the client app first");
    },
    configure(input) {
      settings = input;
      app.installUrl = input.installUrl;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const requestUrl = new URL(request.url ?? "/", url);
    if (requestUrl.pathname === "/start") {
      const state = randomBytes(12).toString("base64url");
      response.writeHead(302, { location: app.installUrl(state), "set-cookie": `client_state=${state}; Path=/; HttpOnly; SameSite=Lax` });
      return void response.end();
    }
    if (requestUrl.pathname !== "/callback" || !settings) {
      response.writeHead(404);
      return void response.end();
    }
    const query = Object.fromEntries(requestUrl.searchParams);
    const expectedState = /(?:^|;\s*)client_state=([^;]+)/.exec(request.headers.cookie ?? "")?.[1];
    const visit: CallbackVisit = { query, expectedState, outcome: "installed" };
    app.visits.push(visit);
    if (query.error) {
      visit.outcome = "cancelled";
      return page(response, "Install cancelled", `The install was cancelled (${query.error}).`);
    }
    if (query.state !== expectedState) {
      visit.outcome = "state_mismatch";
      return page(response, "Install refused", "The state does not match: this answer was not for our request.");
    }
    app.beforeExchange();
    const exchange = await fetch(`${settings.kitUrl}/v1/authorization-codes/tokens`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: "authorization_code",
        code: query.code ?? "",
        redirect_uri: app.redirectUri,
        client_id: settings.clientId,
        client_secret: settings.clientSecret,
      }),
    });
    visit.exchange = { status: exchange.status, body: (await exchange.json()) as Record<string, unknown> };
    if (exchange.status !== 200) {
      visit.outcome = "exchange_failed";
      return page(response, "Install failed", `The code was refused: ${String(visit.exchange.body.error)}.`);
    }
    const me = await fetch(`${settings.kitUrl}/v1/me`, { headers: { authorization: `Bearer ${String(visit.exchange.body.access_token)}` } });
    visit.me = { status: me.status, body: (await me.json()) as Record<string, unknown> };
    return page(response, "Installed", `Connected to ${String(visit.me.body.companyName)} as ${String(visit.me.body.applicationName)}.`);
  }

  return app;
}

function page(response: ServerResponse, title: string, message: string): void {
  const escape = (text: string) => text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
  response.writeHead(200, { "content-type": "text/html; charset=utf-8" });
  response.end(`<!doctype html><html lang="en"><title>${escape(title)}</title><h1>${escape(title)}</h1><p id="message">${escape(message)}</p></html>`);
}
