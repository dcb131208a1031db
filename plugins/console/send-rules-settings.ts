import * as v from "valibot";
import type { AnyRoute } from "../../src/index.ts";
import { MAX_DAILY_CAP, type SendPolicies, type SendPolicyPatch } from "../send-rules/index.ts";
import { actionRoute, type ConsoleDeps, type Form } from "./console-routes.ts";
import { actionDocs } from "./docs.ts";
import { html, type SafeHtml } from "./html.ts";
import { actionForm, type Viewer } from "./layout.ts";

const field = (id: string, label: string, input: SafeHtml) => html`<div><label for="${id}">${label}</label>${input}</div>`;

/**
 * The change a send-rules form asks for: every field as typed, so the
 * send-rules plugin's own checks (those of `reachkit send-rules set`) judge it
 * and name the field. An empty daily cap is no cap; unticked quiet hours are none.
 */
export function sendRulesPatch(form: Form): SendPolicyPatch {
  const cap = (form.dailyCap ?? "").trim();
  return {
    timeZone: (form.timeZone ?? "").trim(),
    quietHours: form.quiet === "on" ? { start: (form.quietStart ?? "").trim(), end: (form.quietEnd ?? "").trim() } : null,
    // Not a whole number: NaN, which the check refuses naming dailyCap.
    dailyCap: cap === "" ? null : /^\d+$/.test(cap) ? Number(cap) : Number.NaN,
  };
}

/** The company's time zone, quiet hours and daily cap of marketing messages, and for owners the form that changes them. */
export async function sendRulesSection(viewer: Viewer, policies: SendPolicies): Promise<SafeHtml> {
  const policy = await policies.get(viewer.company.id);
  const quiet = policy.quietHours;
  const form =
    viewer.user.role === "owner"
      ? actionForm(
          viewer,
          "/settings/send-rules",
          html`${field("time-zone", "Time zone (IANA, for people whose own is unknown)", html`<input type="text" id="time-zone" name="timeZone" value="${policy.timeZone}" required>`)}
<div><label><input type="checkbox" name="quiet" value="on"${quiet ? " checked" : ""}> Quiet hours</label></div>
${field("quiet-start", "Quiet from (local time)", html`<input type="time" id="quiet-start" name="quietStart" value="${quiet?.start ?? "20:00"}">`)}
${field("quiet-end", "Quiet until", html`<input type="time" id="quiet-end" name="quietEnd" value="${quiet?.end ?? "11:00"}">`)}
${field("daily-cap", `Marketing messages per person per day (1 to ${MAX_DAILY_CAP}; empty: no cap)`, html`<input type="number" id="daily-cap" name="dailyCap" min="1" max="${MAX_DAILY_CAP}" value="${policy.dailyCap ?? ""}">`)}
<div><button type="submit">Save the sending rules</button></div>`,
          { class: "filters", label: "Sending rules" },
        )
      : "";
  return html`<h2 id="send-rules">Sending rules</h2>
<section class="card"><dl class="fields">
<dt>Time zone</dt><dd>${policy.timeZone}</dd>
<dt>Quiet hours</dt><dd>${quiet ? `${quiet.start} to ${quiet.end}, in each person's time zone` : "none"}</dd>
<dt>Daily cap</dt><dd>${policy.dailyCap === null ? "none" : `${policy.dailyCap} marketing messages per person per local day`}</dd>
</dl>
<p class="muted">Journeys' messages wait for the end of quiet hours, and are skipped over the cap.</p>
${form}
</section>`;
}

/** Changes the company's sending rules, checked as `reachkit send-rules set` checks them. */
export function sendRulesRoute(deps: ConsoleDeps, policies: SendPolicies): AnyRoute {
  return actionRoute(deps, {
    path: "/settings/send-rules",
    section: "settings",
    role: "owner",
    summary: "Set the sending rules from the console",
    docs: actionDocs({
      operationId: "setConsoleSendRules",
      description:
        "Sets the company's time zone (for people whose own is unknown), quiet hours (`quiet=on` with `quietStart` and `quietEnd`, local HH:MM; without `quiet`, none) " +
        `and daily cap of marketing messages per person (1 to ${MAX_DAILY_CAP}; empty, none).`,
      after: ["showConsoleSettings"],
      fields: v.object({
        csrf_token: v.string(),
        timeZone: v.string(),
        quiet: v.optional(v.literal("on")),
        quietStart: v.optional(v.string()),
        quietEnd: v.optional(v.string()),
        dailyCap: v.optional(v.string()),
      }),
      body: { timeZone: "America/Chicago", quiet: "on", quietStart: "21:00", quietEnd: "09:00", dailyCap: "2" },
      success: { status: 303, location: "/console/settings?done=send-rules", description: "Done: back to the settings" },
    }),
    async run(viewer, form) {
      await policies.set(viewer.company.id, sendRulesPatch(form));
      return { redirect: `${viewer.base}/settings?done=send-rules` };
    },
  });
}
