export { consolePlugin, CONSOLE_PATH } from "./console-plugin.ts";
export { html, escapeHtml, SafeHtml, type HtmlValue } from "./html.ts";
