import type { Company } from "../../src/index.ts";
import type { DashboardUser } from "../oauth/index.ts";
import { html, type HtmlValue, type SafeHtml } from "./html.ts";

/** The console's sections, in the order the menu shows them. */
export const SECTIONS = [
  { id: "overview", label: "Overview", path: "" },
  { id: "subscribers", label: "Subscribers", path: "/subscribers" },
  { id: "messages", label: "Messages", path: "/messages" },
  { id: "journeys", label: "Journeys", path: "/journeys" },
  { id: "campaigns", label: "Campaigns", path: "/campaigns" },
  { id: "catalog", label: "Catalog uploads", path: "/catalog" },
  { id: "products", label: "Products", path: "/products" },
  { id: "reminders", label: "Reminders", path: "/reminders" },
  { id: "privacy", label: "Privacy requests", path: "/privacy" },
  { id: "webhooks", label: "Webhooks", path: "/webhooks" },
  { id: "settings", label: "Settings", path: "/settings" },
] as const;
export type SectionId = (typeof SECTIONS)[number]["id"];

/** Who is looking, and what every page's frame needs. */
export interface Viewer {
  user: DashboardUser;
  company: Company;
  /** The token of every form this viewer posts. */
  csrfToken: string;
  /** The console's path (`/console`, or under a mount prefix). */
  base: string;
  /** The sections this kit has (a kit without the catalog plugin has no catalog pages). */
  sections: readonly SectionId[];
}

export interface Page {
  title: string;
  section: SectionId;
  body: SafeHtml;
  status?: number;
  /** A message shown at the top (the outcome of an action). */
  notice?: string;
  /** Scripts of the console's own (`console.js`), charts (`uplot`). */
  scripts?: readonly ("console" | "charts")[];
  /** Origins beyond the kit's own that the page's script may call (an upload target elsewhere). */
  connectTo?: readonly string[];
}

export const hidden = (name: string, value: string) => html`<input type="hidden" name="${name}" value="${value}">`;

/** A form that posts an action: the CSRF token is always there. */
export function actionForm(viewer: Viewer, action: string, body: HtmlValue, attributes: { class?: string; label?: string } = {}): SafeHtml {
  return html`<form method="post" action="${viewer.base}${action}"${attributes.class ? html` class="${attributes.class}"` : ""}${attributes.label ? html` aria-label="${attributes.label}"` : ""}>
${hidden("csrf_token", viewer.csrfToken)}${body}</form>`;
}

function document(title: string, head: HtmlValue, body: HtmlValue): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<link rel="icon" href="data:,">
<title>${title} · reachkit console</title>
${head}
</head>
<body>
${body}
</body>
</html>
`.text;
}

const assets = (base: string, scripts: Page["scripts"] = []) => html`<link rel="stylesheet" href="${base}/assets/console.css">
${scripts.includes("charts") ? html`<link rel="stylesheet" href="${base}/assets/uPlot.min.css">
<script src="${base}/assets/uPlot.iife.min.js" defer></script>` : ""}
${scripts.length > 0 ? html`<script src="${base}/assets/console.js" defer></script>` : ""}`;

/** A page of the signed-in console: the menu, who is signed in, sign-out, then the page. */
export function consolePage(viewer: Viewer, page: Page): string {
  const { base } = viewer;
  const menu = SECTIONS.filter((section) => viewer.sections.includes(section.id)).map(
    (section) => html`<li><a href="${base}${section.path}"${section.id === page.section ? html` aria-current="page"` : ""}>${section.label}</a></li>`,
  );
  return document(
    page.title,
    assets(base, page.scripts),
    html`<a class="skip" href="#content">Skip to content</a>
<header class="top">
<a class="brand" href="${base}">${viewer.company.name}</a>
<nav class="sections" aria-label="Console sections"><ul>${menu}</ul></nav>
<div class="who"><span>${viewer.user.email} (${viewer.user.role})</span>
${actionForm(viewer, "/sign-out", html`<button type="submit">Sign out</button>`)}
</div>
</header>
<main id="content">
${page.notice ? html`<p class="notice" role="status">${page.notice}</p>` : ""}${page.body}
</main>`,
  );
}

/** A page of nobody signed in (the sign-in form). */
export function publicPage(base: string, title: string, body: SafeHtml): string {
  return document(title, assets(base), html`<main id="content" class="sign-in">${body}</main>`);
}

/**
 * Headers of every console page: no framing, no caching, no referrer, and a
 * CSP that runs only the console's own files (no inline script or style).
 */
export function pageHeaders(connectTo: readonly string[] = []): Record<string, string> {
  return {
    "content-security-policy": [
      "default-src 'none'",
      "script-src 'self'",
      "style-src 'self'",
      "img-src 'self' data:",
      ["connect-src 'self'", ...connectTo].join(" "),
      "form-action 'self'",
      "frame-ancestors 'none'",
      "base-uri 'none'",
    ].join("; "),
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
  };
}
