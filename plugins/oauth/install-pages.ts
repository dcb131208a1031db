import { createHash } from "node:crypto";
import { SCOPE_DESCRIPTIONS, escapeHtml, htmlPage, type Scope } from "../../src/index.ts";

/** The install request's parameters, carried through the forms as hidden fields. */
export interface InstallParameters {
  client_id: string;
  redirect_uri: string;
  scope?: string;
  state?: string;
}

const STYLE = `
:root { color-scheme: light; font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
body { margin: 0; background: #f3f4f6; color: #111827; }
main { max-width: 28rem; margin: 4rem auto; background: #fff; border: 1px solid #d1d5db; border-radius: 0.75rem; padding: 2rem; }
h1 { font-size: 1.4rem; margin: 0 0 1rem; }
p { line-height: 1.5; }
label { display: block; font-weight: 600; margin: 1rem 0 0.25rem; }
input[type=email], input[type=password] { width: 100%; box-sizing: border-box; padding: 0.6rem; font-size: 1rem; border: 1px solid #6b7280; border-radius: 0.4rem; }
input:focus-visible, button:focus-visible { outline: 3px solid #2563eb; outline-offset: 2px; }
ul.scopes { padding-left: 1.25rem; }
ul.scopes li { margin: 0.4rem 0; }
ul.scopes code { color: #4b5563; font-size: 0.85em; }
.actions { display: flex; gap: 0.75rem; margin-top: 1.5rem; }
button { font-size: 1rem; padding: 0.6rem 1.2rem; border-radius: 0.4rem; border: 1px solid #1d4ed8; cursor: pointer; }
button.primary { background: #1d4ed8; color: #fff; }
button.secondary { background: #fff; color: #1d4ed8; }
.alert { background: #fef2f2; border: 1px solid #b91c1c; color: #7f1d1d; padding: 0.75rem; border-radius: 0.4rem; }
.muted { color: #4b5563; font-size: 0.9rem; }
`;

const STYLE_HASH = `'sha256-${createHash("sha256").update(STYLE).digest("base64")}'`;

/**
 * Headers of every install page: no framing (clickjacking), no caching, no
 * referrer (the URL carries the state), and a CSP that allows only the inline
 * style and form posts to this page or, for the consent page, to the client.
 */
export function pageHeaders(formTarget?: string): Record<string, string> {
  const formAction = ["'self'", ...(formTarget ? [cspSource(formTarget)] : [])].join(" ");
  return {
    "content-security-policy": `default-src 'none'; style-src ${STYLE_HASH}; form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'`,
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
  };
}

/** The CSP source of a redirect URI: its origin (registered URIs are http or https). */
function cspSource(uri: string): string {
  return new URL(uri).origin;
}

function layout(title: string, body: string): string {
  return htmlPage(title, STYLE, body);
}

function hiddenFields(parameters: InstallParameters, csrfToken: string): string {
  const fields: [string, string | undefined][] = [
    ["csrf_token", csrfToken],
    ["client_id", parameters.client_id],
    ["redirect_uri", parameters.redirect_uri],
    ["scope", parameters.scope],
    ["state", parameters.state],
  ];
  return fields
    .filter((field): field is [string, string] => field[1] !== undefined)
    .map(([name, value]) => `<input type="hidden" name="${name}" value="${escapeHtml(value)}">`)
    .join("\n");
}

export function errorPage(title: string, message: string): string {
  return layout(
    title,
    `<h1>${escapeHtml(title)}</h1>
<p role="alert">${escapeHtml(message)}</p>
<p class="muted">Nothing was installed. Go back to the application and start again, or contact its developer.</p>`,
  );
}

export function loginPage(input: {
  action: string;
  applicationName: string;
  parameters: InstallParameters;
  csrfToken: string;
  email?: string;
  error?: string;
}): string {
  const alert = input.error ? `<p class="alert" role="alert" id="login-error">${escapeHtml(input.error)}</p>\n` : "";
  const describedBy = input.error ? ` aria-describedby="login-error"` : "";
  return layout(
    "Sign in",
    `<h1>Sign in to install ${escapeHtml(input.applicationName)}</h1>
${alert}<form method="post" action="${escapeHtml(input.action)}">
${hiddenFields(input.parameters, input.csrfToken)}
<label for="email">Email</label>
<input type="email" id="email" name="email" autocomplete="username" required value="${escapeHtml(input.email ?? "")}"${describedBy}>
<label for="password">Password</label>
<input type="password" id="password" name="password" autocomplete="current-password" required${describedBy}>
<div class="actions"><button type="submit" class="primary">Sign in</button></div>
</form>`,
  );
}

export function consentPage(input: {
  action: string;
  applicationName: string;
  companyName: string;
  userEmail: string;
  scopes: readonly Scope[];
  parameters: InstallParameters;
  csrfToken: string;
}): string {
  const application = escapeHtml(input.applicationName);
  const scopes = input.scopes
    .map((scope) => `<li>${escapeHtml(SCOPE_DESCRIPTIONS[scope])} <code>${escapeHtml(scope)}</code></li>`)
    .join("\n");
  return layout(
    `Install ${input.applicationName}`,
    `<h1>Install ${application} for ${escapeHtml(input.companyName)}?</h1>
<p>${application} asks for permission to:</p>
<ul class="scopes" aria-label="Requested permissions">
${scopes}
</ul>
<p class="muted">Signed in as ${escapeHtml(input.userEmail)}. Access lasts until the application is uninstalled.</p>
<form method="post" action="${escapeHtml(input.action)}">
${hiddenFields(input.parameters, input.csrfToken)}
<div class="actions">
<button type="submit" name="decision" value="authorize" class="primary">Authorize</button>
<button type="submit" name="decision" value="cancel" class="secondary">Cancel</button>
</div>
</form>`,
  );
}
