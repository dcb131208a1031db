import { badRequest, HttpError, SCOPES, type Accounts, type Scope } from "../../src/index.ts";
import type { AccountsService } from "../accounts/index.ts";
import type { LegacyService } from "../legacy/index.ts";
import type { OAuthApi } from "../oauth/index.ts";
import type { SendPolicies } from "../send-rules/index.ts";
import type { SubscriptionsService } from "../subscriptions/index.ts";
import { table, when } from "./format.ts";
import { html, type SafeHtml } from "./html.ts";
import { actionForm, type Viewer } from "./layout.ts";
import { sendRulesSection } from "./send-rules-settings.ts";

export interface SettingsDeps {
  accounts: AccountsService & Accounts;
  subscriptions: SubscriptionsService;
  oauth: OAuthApi;
  /** Absent when the kit has no legacy plugin (no transactional message prefix). */
  legacy?: LegacyService;
  /** Absent when the kit has no send-rules plugin (no time zone, quiet hours or daily cap). */
  sendPolicies?: SendPolicies;
}

/** A form's scope checkboxes are named `scope:<scope>`: a form field named twice keeps its first value only. */
export const SCOPE_FIELD = "scope:";

/** The scopes ticked in a form; none ticked means every scope. */
export function tickedScopes(form: Readonly<Record<string, string>>): Scope[] {
  const ticked = SCOPES.filter((scope) => form[`${SCOPE_FIELD}${scope}`] !== undefined);
  return ticked.length > 0 ? ticked : [...SCOPES];
}

/** Outcomes of settings actions, shown at the top of the page after the redirect. */
export const SETTINGS_NOTICES: Readonly<Record<string, string>> = {
  "sign-up-unit": "The sign-up unit is created.",
  "sender-number": "The sender number is set.",
  "message-prefix": "The message prefix is saved.",
  "message-prefix-reset": "The message prefix is back to the default.",
  "send-rules": "The sending rules are saved.",
  "key-revoked": "The key is revoked: it no longer works.",
  "user-created": "The user is created: they can sign in now.",
  "role-changed": "The role is changed.",
  "user-deleted": "The user is deleted and signed out.",
};

/**
 * Runs a service call whose refusals of the operator's input (a malformed
 * code, a taken number, a short password) are plain errors: they become the
 * 400 page naming the field.
 */
export async function operatorInput<T>(field: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof Error && !(error instanceof HttpError) && !(error instanceof TypeError)) throw badRequest(error.message, [{ path: field, message: error.message }]);
    throw error;
  }
}

const field = (id: string, label: string, input: SafeHtml) => html`<div><label for="${id}">${label}</label>${input}</div>`;

/** The settings page: messaging for everyone to read; keys, applications and users for owners only. */
export async function settingsBody(viewer: Viewer, deps: SettingsDeps, shown: { secret?: SafeHtml } = {}): Promise<SafeHtml> {
  const companyId = viewer.company.id;
  const owner = viewer.user.role === "owner";
  const [units, prefix] = await Promise.all([deps.subscriptions.signUpUnits.list(companyId), deps.legacy?.prefixes.template(companyId)]);
  const webhook = deps.subscriptions.senderNumbers.webhookPath(companyId);
  const messaging = html`<h2 id="messaging">Messaging</h2>
<section class="card"><dl class="fields">
<dt>Company</dt><dd>${viewer.company.name} (<code>${viewer.company.domain}</code>)</dd>
<dt>Sender number</dt><dd>${viewer.company.senderNumber ?? "none"}</dd>
<dt>Inbound webhook</dt><dd><code>${webhook}</code></dd>
${prefix ? html`<dt>Message prefix</dt><dd><code>${prefix.template}</code>${prefix.custom ? "" : " (the default)"}</dd>` : ""}
</dl>
${owner ? actionForm(viewer, "/settings/sender-number", html`${field("number", "New sender number", html`<input type="tel" id="number" name="number" required placeholder="+15551234567">`)}<div><button type="submit">Set the sender number</button></div>`, { class: "filters", label: "Sender number" }) : ""}
${owner && prefix ? actionForm(viewer, "/settings/message-prefix", html`${field("template", "Message prefix ({company} and {firstName} are filled in)", html`<input type="text" id="template" name="template" value="${prefix.template}" maxlength="100">`)}<div><button type="submit">Save the prefix</button> <button type="submit" name="reset" value="true" class="secondary">Back to the default</button></div>`, { class: "filters", label: "Message prefix" }) : ""}
</section>
<h2 id="sign-up-units">Sign-up units</h2>
${table(
  "Sign-up units",
  ["Name", "Type", "Locale", "Id (signUpSourceId)"],
  units.map((unit) => html`<tr><td>${unit.name}</td><td>${unit.type}</td><td>${unit.language}-${unit.country}</td><td><code>${unit.id}</code></td></tr>`),
  "No sign-up units.",
)}
${owner ? actionForm(
  viewer,
  "/settings/sign-up-units",
  html`${field("unit-type", "Type", html`<select id="unit-type" name="type"><option>MARKETING</option><option>TRANSACTIONAL</option></select>`)}
${field("unit-language", "Language", html`<input type="text" id="unit-language" name="language" value="en" maxlength="2" size="3">`)}
${field("unit-country", "Country", html`<input type="text" id="unit-country" name="country" value="US" maxlength="2" size="3">`)}
${field("unit-name", "Name (optional)", html`<input type="text" id="unit-name" name="name">`)}
<div><button type="submit">Add a sign-up unit</button></div>`,
  { class: "filters card", label: "New sign-up unit" },
) : ""}
${deps.sendPolicies ? await sendRulesSection(viewer, deps.sendPolicies) : ""}`;
  if (!owner) return html`<h1>Settings</h1>${messaging}<p class="muted">API keys, applications and users are shown to owners only.</p>`;
  return html`<h1>Settings</h1>
${shown.secret ?? ""}
${messaging}
${await accessBody(viewer, deps)}`;
}

async function accessBody(viewer: Viewer, deps: SettingsDeps): Promise<SafeHtml> {
  const companyId = viewer.company.id;
  const [applications, credentials, publicApps, users] = await Promise.all([
    deps.accounts.listApplications(companyId),
    deps.accounts.listCredentials(companyId),
    deps.oauth.applications.list(companyId),
    deps.oauth.users.list(companyId),
  ]);
  const appName = new Map(applications.map((application) => [application.id, application.name]));
  const keys = credentials.filter((credential) => credential.kind !== "oauth");
  const scopeBoxes = (prefix: string) =>
    html`<fieldset><legend>Scopes (none ticked: every scope)</legend>${SCOPES.map((scope) => html`<label><input type="checkbox" name="${prefix}${scope}" value="yes"> <code>${scope}</code></label> `)}</fieldset>`;
  return html`<h2 id="api-keys">API keys and tokens</h2>
${table(
  "API keys and tokens",
  ["Kind", "Application", "Ends with", "Scopes", "Created", ""],
  keys.map(
    (key) => html`<tr><td>${key.kind === "legacy" ? "legacy token" : "API key"}</td><td>${key.applicationId ? (appName.get(key.applicationId) ?? "") : ""}</td><td><code>…${key.hint}</code></td>
<td>${key.scopes.join(" ")}</td><td>${when(key.createdAt)}</td>
<td>${key.revokedAt ? html`revoked ${when(key.revokedAt)}` : actionForm(viewer, `/settings/api-keys/${key.id}/revoke`, html`<button type="submit" class="danger" aria-label="Revoke the key ending ${key.hint}">Revoke</button>`, { class: "inline" })}</td></tr>`,
  ),
  "No keys.",
)}
${actionForm(
  viewer,
  "/settings/api-keys",
  html`${field("key-name", "New application's name", html`<input type="text" id="key-name" name="name" required>`)}
${scopeBoxes(SCOPE_FIELD)}
<div><button type="submit">Create an API key</button></div>`,
  { class: "stack card", label: "New API key" },
)}
<h2 id="oauth-apps">OAuth applications</h2>
${table(
  "OAuth applications",
  ["Name", "Client id", "Redirect URIs", "Scopes", ""],
  publicApps.map(
    (app) => html`<tr><td>${app.name}</td><td><code>${app.clientId}</code></td><td class="wrap">${app.redirectUris.join(" ")}</td><td>${app.scopes.join(" ")}</td>
<td>${actionForm(viewer, `/settings/oauth-apps/${app.applicationId}/rotate-secret`, html`<button type="submit" class="secondary" aria-label="New client secret for ${app.name}">New secret</button>`, { class: "inline" })}</td></tr>`,
  ),
  "No OAuth applications.",
)}
${actionForm(
  viewer,
  "/settings/oauth-apps",
  html`${field("app-name", "Application name (shown on the consent page)", html`<input type="text" id="app-name" name="name" required>`)}
${field("app-redirect", "Redirect URIs (https, or http on localhost; one a line)", html`<textarea id="app-redirect" name="redirectUris" rows="2" required></textarea>`)}
${scopeBoxes(SCOPE_FIELD)}
<div><button type="submit">Register the application</button></div>`,
  { class: "stack card", label: "New OAuth application" },
)}
<h2 id="users">Dashboard users</h2>
${table(
  "Dashboard users",
  ["Email", "Role", "Since", ""],
  users.map((user) => {
    const other = user.role === "owner" ? "viewer" : "owner";
    return html`<tr><td>${user.email}${user.id === viewer.user.id ? " (you)" : ""}</td><td>${user.role}</td><td>${when(user.createdAt)}</td>
<td>${actionForm(viewer, `/settings/users/${user.id}/role`, html`<input type="hidden" name="role" value="${other}"><button type="submit" class="secondary" aria-label="Make ${other} ${user.email}">Make ${other}</button>`, { class: "inline" })}
${actionForm(viewer, `/settings/users/${user.id}/delete`, html`<button type="submit" class="danger" aria-label="Delete ${user.email}">Delete</button>`, { class: "inline" })}</td></tr>`;
  }),
  "No users.",
)}
${actionForm(
  viewer,
  "/settings/users",
  html`${field("user-email", "Email", html`<input type="email" id="user-email" name="email" required autocomplete="off">`)}
${field("user-password", "Password (at least 10 characters)", html`<input type="password" id="user-password" name="password" required minlength="10" autocomplete="new-password">`)}
${field("user-role", "Role", html`<select id="user-role" name="role"><option value="viewer">viewer (reads only)</option><option value="owner">owner (everything)</option></select>`)}
<div><button type="submit">Add a user</button></div>`,
  { class: "stack card", label: "New dashboard user" },
)}`;
}
