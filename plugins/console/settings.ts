import * as v from "valibot";
import { badRequest, notFound, type AnyRoute } from "../../src/index.ts";
import { isDashboardRole, LastOwnerError } from "../oauth/index.ts";
import { SUBSCRIPTION_TYPES, type SubscriptionType } from "../subscriptions/index.ts";
import { actionRoute, pageRoute, queryText, type ConsoleDeps, type Form } from "./console-routes.ts";
import { actionDocs, pageDocs } from "./docs.ts";
import { html } from "./html.ts";
import type { Viewer } from "./layout.ts";
import { sendRulesRoute } from "./send-rules-settings.ts";
import { operatorInput, SCOPE_FIELD, settingsBody, SETTINGS_NOTICES, tickedScopes, type SettingsDeps } from "./settings-page.ts";

/** Example ids the API reference's story knows: a credential and an OAuth application of the story's company, a user it made. */
export const EXAMPLE_CREDENTIAL_ID = "9b1c7e0e-5d5b-4c47-8f0e-2f3a7c1d9e01";
export const EXAMPLE_APPLICATION_ID = "3f6e2a1b-7c8d-4e9f-a0b1-c2d3e4f5a6b7";
export const EXAMPLE_NEW_USER_ID = "6a7b8c9d-0e1f-4a2b-8c3d-4e5f6a7b8c9d";

const CSRF = { csrf_token: v.string() };

/** The settings page and its changes, each checked by the rules of the service behind it (as the API and CLI check them). */
export function settingsRoutes(deps: ConsoleDeps, services: SettingsDeps): AnyRoute[] {
  const back = (viewer: Viewer, done: string, anchor = "") => ({ redirect: `${viewer.base}/settings?done=${done}${anchor}` });
  const change = (input: {
    path: string;
    operationId: string;
    summary: string;
    description: string;
    fields: v.ObjectEntries;
    body: Record<string, string>;
    done: string;
    params?: Record<string, string>;
    exampleParams?: Record<string, string>;
    after?: string[];
    location?: string;
    run(viewer: Viewer, form: Form, params: Readonly<Record<string, string>>): Promise<void | { redirect: string }>;
  }) =>
    actionRoute(deps, {
      path: input.path,
      section: "settings",
      role: "owner",
      summary: input.summary,
      docs: actionDocs({
        operationId: input.operationId,
        description: input.description,
        after: input.after ?? ["showConsoleSettings"],
        fields: v.object({ ...CSRF, ...input.fields }),
        body: input.body,
        params: input.params,
        exampleParams: input.exampleParams,
        success: { status: 303, location: input.location ?? `/console/settings?done=${input.done}`, description: "Done: back to the settings" },
      }),
      async run(viewer, form, context) {
        return (await input.run(viewer, form, context.params)) ?? back(viewer, input.done);
      },
    });
  const secretPage = async (viewer: Viewer, title: string, secret: string, what: string) => ({
    title: "Settings",
    section: "settings" as const,
    body: await settingsBody(viewer, services, {
      secret: html`<section class="secret" role="status"><h2>${title}</h2><p>${what} It is shown once: store it now.</p><p><code>${secret}</code></p></section>`,
    }),
  });
  const ownApplication = async (viewer: Viewer, applicationId: string) => {
    const application = (await services.oauth.applications.list(viewer.company.id)).find((candidate) => candidate.applicationId === applicationId);
    if (!application) throw notFound();
    return application;
  };

  return [
    pageRoute(deps, {
      path: "/settings",
      section: "settings",
      summary: "Show the console's settings",
      docs: pageDocs({
        operationId: "showConsoleSettings",
        description: "The company's sender number, message prefix, sign-up units and sending rules (time zone, quiet hours, daily cap); for owners also its API keys, OAuth applications and dashboard users, with the forms that change them.",
        query: v.object({ done: v.optional(v.pipe(v.string(), v.description("The action just done (its message is shown)"))) }),
      }),
      async render(viewer, context) {
        const done = queryText(context, "done");
        return { title: "Settings", section: "settings", notice: done ? SETTINGS_NOTICES[done] : undefined, body: await settingsBody(viewer, services) };
      },
    }),
    change({
      path: "/settings/sign-up-units",
      operationId: "createConsoleSignUpUnit",
      summary: "Add a sign-up unit from the console",
      description: "Adds an API sign-up unit (the signUpSourceId of opt-ins) for a type and locale.",
      fields: { type: v.picklist(SUBSCRIPTION_TYPES), language: v.string(), country: v.string(), name: v.optional(v.string()) },
      body: { type: "MARKETING", language: "fr", country: "CA", name: "Quebec sign-ups" },
      done: "sign-up-unit",
      async run(viewer, form) {
        const type = form.type as SubscriptionType;
        if (!SUBSCRIPTION_TYPES.includes(type)) throw operatorProblem("type", `type must be one of ${SUBSCRIPTION_TYPES.join(", ")}`);
        await operatorInput("language", () =>
          services.subscriptions.signUpUnits.create({ companyId: viewer.company.id, type, language: form.language ?? "", country: form.country ?? "", name: form.name?.trim() || undefined }),
        );
      },
    }),
    change({
      path: "/settings/sender-number",
      operationId: "setConsoleSenderNumber",
      summary: "Set the sender number from the console",
      description: "Sets the number (E.164 or a short code) the company's texts go out from; inbound texts to it reach this company. A number another company holds is refused.",
      fields: { number: v.string() },
      body: { number: "+15557654321" },
      done: "sender-number",
      async run(viewer, form) {
        await operatorInput("number", () => services.subscriptions.senderNumbers.set(viewer.company.id, form.number ?? ""));
      },
    }),
    change({
      path: "/settings/message-prefix",
      operationId: "setConsoleMessagePrefix",
      summary: "Set the message prefix from the console",
      description: "Sets the text every transactional message starts with (`{company}` and `{firstName}` are filled in), or with `reset` goes back to the default.",
      fields: { template: v.optional(v.string()), reset: v.optional(v.literal("true")) },
      body: { template: "{company}: " },
      done: "message-prefix",
      async run(viewer, form) {
        const prefixes = services.legacy?.prefixes;
        if (!prefixes) throw notFound();
        if (form.reset === "true") {
          await prefixes.reset(viewer.company.id);
          return back(viewer, "message-prefix-reset");
        }
        await operatorInput("template", () => prefixes.set(viewer.company.id, form.template ?? ""));
      },
    }),
    ...(services.sendPolicies ? [sendRulesRoute(deps, services.sendPolicies)] : []),
    actionRoute(deps, {
      path: "/settings/api-keys",
      section: "settings",
      role: "owner",
      summary: "Create an API key from the console",
      docs: actionDocs({
        operationId: "createConsoleApiKey",
        description: "Creates a private application with the ticked scopes (fields named `scope:<scope>`; none ticked: every scope) and its API key, shown once on the page that answers.",
        after: ["showConsoleSettings"],
        fields: v.object({ ...CSRF, name: v.string(), [`${SCOPE_FIELD}subscriptions:read`]: v.optional(v.literal("yes")) }),
        body: { name: "Storefront sync", [`${SCOPE_FIELD}subscriptions:read`]: "yes" },
        success: { status: 200, description: "The settings page with the new key, shown once" },
      }),
      async run(viewer, form) {
        const name = form.name?.trim();
        if (!name) throw operatorProblem("name", "the application needs a name");
        const application = await services.accounts.createApplication({ companyId: viewer.company.id, name, scopes: tickedScopes(form) });
        const issued = await services.accounts.issueCredential({ companyId: viewer.company.id, kind: "api_key", applicationId: application.id });
        return secretPage(viewer, "New API key", issued.token, `The API key of ${name}.`);
      },
    }),
    change({
      path: "/settings/api-keys/:credentialId/revoke",
      operationId: "revokeConsoleApiKey",
      summary: "Revoke an API key from the console",
      description: "Revokes an API key or legacy token of the company at once.",
      fields: {},
      body: {},
      params: { credentialId: "The key's id" },
      exampleParams: { credentialId: EXAMPLE_CREDENTIAL_ID },
      done: "key-revoked",
      async run(viewer, _form, params) {
        const credential = (await services.accounts.listCredentials(viewer.company.id)).find((candidate) => candidate.id === params.credentialId && candidate.kind !== "oauth");
        if (!credential) throw notFound();
        await services.accounts.revokeCredential(credential.id);
      },
    }),
    actionRoute(deps, {
      path: "/settings/oauth-apps",
      section: "settings",
      role: "owner",
      summary: "Register an OAuth application from the console",
      docs: actionDocs({
        operationId: "createConsoleOAuthApp",
        description: "Registers a public (OAuth 2.0) application the company owns, with its redirect URIs (one a line) and the ticked scopes; its client secret is shown once on the page that answers.",
        after: ["showConsoleSettings"],
        fields: v.object({ ...CSRF, name: v.string(), redirectUris: v.string() }),
        body: { name: "Loyalty app", redirectUris: "https://loyalty.example/oauth/callback" },
        success: { status: 200, description: "The settings page with the client id and secret, the secret shown once" },
      }),
      async run(viewer, form) {
        const redirectUris = (form.redirectUris ?? "").split(/\s+/).filter(Boolean);
        const { application, clientSecret } = await operatorInput("redirectUris", () =>
          services.oauth.applications.create({ companyId: viewer.company.id, name: form.name?.trim() ?? "", redirectUris, scopes: tickedScopes(form) }),
        );
        return secretPage(viewer, "New OAuth application", clientSecret, `The client secret of ${application.name} (client id ${application.clientId}).`);
      },
    }),
    actionRoute(deps, {
      path: "/settings/oauth-apps/:applicationId/rotate-secret",
      section: "settings",
      role: "owner",
      summary: "Replace an OAuth application's client secret from the console",
      docs: actionDocs({
        operationId: "rotateConsoleOAuthAppSecret",
        description: "Replaces the client secret of an OAuth application the company owns (the old one stops working at once); the new one is shown once.",
        after: ["showConsoleSettings"],
        params: { applicationId: "The application's id" },
        exampleParams: { applicationId: EXAMPLE_APPLICATION_ID },
        fields: v.object(CSRF),
        body: {},
        success: { status: 200, description: "The settings page with the new secret, shown once" },
      }),
      async run(viewer, _form, context) {
        const application = await ownApplication(viewer, context.params.applicationId ?? "");
        const { clientSecret } = await services.oauth.applications.rotateSecret(application.clientId);
        return secretPage(viewer, "New client secret", clientSecret, `The new client secret of ${application.name}.`);
      },
    }),
    change({
      path: "/settings/users",
      operationId: "createConsoleDashboardUser",
      summary: "Add a dashboard user from the console",
      description: "Adds a user who signs in to the console and the install page: an owner (everything) or a viewer (reads only).",
      fields: { email: v.string(), password: v.string(), role: v.picklist(["owner", "viewer"]) },
      body: { email: "support@acme.example", password: "a long enough password", role: "viewer" },
      done: "user-created",
      location: `/console/settings?done=user-created&user=${EXAMPLE_NEW_USER_ID}`,
      async run(viewer, form) {
        const role = form.role ?? "viewer";
        if (!isDashboardRole(role)) throw operatorProblem("role", "role must be owner or viewer");
        const user = await operatorInput("email", () => services.oauth.users.create({ companyId: viewer.company.id, email: form.email ?? "", password: form.password ?? "", role }));
        return { redirect: `${viewer.base}/settings?done=user-created&user=${user.id}` };
      },
    }),
    change({
      path: "/settings/users/:userId/role",
      operationId: "setConsoleDashboardUserRole",
      summary: "Change a dashboard user's role from the console",
      description: "Makes a user of the company an owner or a viewer. The company's last owner stays an owner.",
      fields: { role: v.picklist(["owner", "viewer"]) },
      body: { role: "owner" },
      params: { userId: "The user's id" },
      exampleParams: { userId: EXAMPLE_NEW_USER_ID },
      after: ["showConsoleSettings", "createConsoleDashboardUser", "showConsoleSettings"],
      done: "role-changed",
      async run(viewer, form, params) {
        const role = form.role ?? "";
        if (!isDashboardRole(role)) throw operatorProblem("role", "role must be owner or viewer");
        if (!(await lastOwnerGuard("role", () => services.oauth.users.setRole(viewer.company.id, params.userId ?? "", role)))) throw notFound();
      },
    }),
    change({
      path: "/settings/users/:userId/delete",
      operationId: "deleteConsoleDashboardUser",
      summary: "Delete a dashboard user from the console",
      description: "Deletes a user of the company and ends their sign-ins. The company's last owner is kept.",
      fields: {},
      body: {},
      params: { userId: "The user's id" },
      exampleParams: { userId: EXAMPLE_NEW_USER_ID },
      after: ["showConsoleSettings", "createConsoleDashboardUser", "showConsoleSettings"],
      done: "user-deleted",
      async run(viewer, _form, params) {
        if (!(await lastOwnerGuard("userId", () => services.oauth.users.deleteOf(viewer.company.id, params.userId ?? "")))) throw notFound();
      },
    }),
  ];
}

const operatorProblem = (field: string, message: string) => badRequest(message, [{ path: field, message }]);

/** The last owner's refusal as the 400 page; any other failure as it is. */
async function lastOwnerGuard<T>(field: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof LastOwnerError) throw operatorProblem(field, error.message);
    throw error;
  }
}
