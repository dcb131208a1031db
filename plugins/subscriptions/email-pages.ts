import { escapeHtml, htmlPage } from "../../src/index.ts";

/** The pages a subscriber sees after opening a link of the plugin's emails: small, self-contained, no script. */

const STYLE =
  "body{font-family:system-ui,sans-serif;margin:0;background:#f6f6f4;color:#1d1d1b}main{max-width:32rem;margin:12vh auto;padding:2rem;background:#fff;border-radius:8px}" +
  "h1{font-size:1.4rem}button{font:inherit;padding:.6rem 1.2rem;border:0;border-radius:6px;background:#1d1d1b;color:#fff;cursor:pointer}";

function page(title: string, body: string): string {
  return htmlPage(title, STYLE, `<h1>${escapeHtml(title)}</h1>\n${body}`);
}

const paragraph = (text: string) => `<p>${escapeHtml(text)}</p>`;

export const confirmedPage = (company: string, email: string) =>
  page("Subscription confirmed", paragraph(`${email} will receive emails from ${company}. Thank you.`));

export const alreadyConfirmedPage = (company: string, email: string) =>
  page("Already confirmed", paragraph(`${email} already receives emails from ${company}.`));

/** A link that cannot be used: tampered with, made for another purpose, expired, or about nothing any more. */
export const linkProblemPage = (title: string, text: string) => page(title, paragraph(text));

/** What a GET of a one-click link shows: the question, and a button that sends the POST (RFC 8058 §3.2: a GET changes nothing). */
export const unsubscribePromptPage = (company: string, email: string, action: string) =>
  page(
    "Unsubscribe?",
    `${paragraph(`Stop emails from ${company} to ${email}?`)}
<form method="post" action="${escapeHtml(action)}">
<input type="hidden" name="List-Unsubscribe" value="One-Click">
<button type="submit">Unsubscribe</button>
</form>`,
  );

export const unsubscribedPage = (company: string, email: string) =>
  page("Unsubscribed", paragraph(`${email} will no longer receive these emails from ${company}.`));
