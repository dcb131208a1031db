import { ACCOUNTS } from "../auth/accounts.ts";
import type { JobRecord, JobStatus } from "../jobs/job-record.ts";
import type { Reachkit } from "../kernel/reachkit.ts";
import { channelOf } from "../messaging/outbox-record.ts";
import { EMAIL_SENDER, EmailSendError, isEmailAddress } from "../ports/email-sender.ts";
import { CliUsageError, requiredOption, stringOption, type CliCommand } from "./command.ts";
import { formatFields, formatTable } from "./format.ts";

const JOB_STATUSES: readonly JobStatus[] = ["queued", "running", "done", "dead", "cancelled"];

const init: CliCommand = {
  name: "init",
  summary: "Create a company with an API key holding every scope, a legacy token and its sign-up units; prints the credentials once",
  options: {
    company: { type: "string", description: "Company name (default: My Company)", placeholder: "NAME" },
    domain: { type: "string", description: "Company public domain or slug (default: from the name)", placeholder: "DOMAIN" },
    "contact-email": { type: "string", description: "Company contact email", placeholder: "EMAIL" },
  },
  async run(values, context) {
    const kit = await context.openKit();
    const { output } = await kit.provisionCompany({
      name: stringOption(values, "company") ?? "My Company",
      domain: stringOption(values, "domain"),
      contactEmail: stringOption(values, "contact-email"),
    });
    return {
      json: output,
      text: `${formatFields(output)}\nThese credentials are shown once: store them now.\n`,
    };
  },
};

const jobRow = (job: JobRecord) => ({
  id: job.id,
  type: job.type,
  status: job.status,
  key: job.key ?? "",
  runAt: new Date(job.runAt).toISOString(),
  attempts: `${job.attempts}/${job.maxAttempts}`,
  lastError: job.lastError ?? "",
});

const jobsList: CliCommand = {
  name: "jobs list",
  summary: "List durable jobs, oldest first (dead jobs are those that failed every attempt)",
  options: {
    status: { type: "string", description: `Only this status: ${JOB_STATUSES.join(", ")}`, placeholder: "STATUS" },
    type: { type: "string", description: "Only this job type", placeholder: "TYPE" },
  },
  async run(values, context) {
    const status = stringOption(values, "status");
    if (status !== undefined && !JOB_STATUSES.includes(status as JobStatus)) {
      throw new CliUsageError(`--status must be one of ${JOB_STATUSES.join(", ")}`);
    }
    const kit = await context.openKit();
    const jobs = await kit.jobs.list({ status: status as JobStatus | undefined, type: stringOption(values, "type") });
    return { json: jobs, text: formatTable(jobs.map(jobRow)) };
  },
};

const jobsRetry: CliCommand = {
  name: "jobs retry",
  summary: "Queue a dead or cancelled job again, due now",
  options: { id: { type: "string", description: "Job id", required: true, placeholder: "ID" } },
  async run(values, context) {
    const kit = await context.openKit();
    const job = await kit.jobs.retry(requiredOption(values, "id"));
    if (!job) throw new CliUsageError("no dead or cancelled job with that id");
    return { json: job, text: `job ${job.id} queued again` };
  },
};

const outboxList: CliCommand = {
  name: "outbox list",
  summary: "List outbound texts and emails, newest last, with the body exactly as sent (an email's subject and text part) and their delivery status (queued, sent, delivered, undelivered, failed, suppressed)",
  options: {
    to: { type: "string", description: "Only messages to this E.164 number or email address", placeholder: "RECIPIENT" },
    company: { type: "string", description: "Only this company's messages", placeholder: "ID" },
    limit: { type: "string", description: "At most this many, the newest (default 1000)", placeholder: "N" },
  },
  async run(values, context) {
    const limitText = stringOption(values, "limit");
    const limit = limitText === undefined ? undefined : Number(limitText);
    if (limit !== undefined && (!Number.isInteger(limit) || limit < 1)) throw new CliUsageError("--limit must be a positive integer");
    const kit = await context.openKit();
    const messages = await kit.outbox.list({ to: stringOption(values, "to"), companyId: stringOption(values, "company"), limit });
    const json = messages.map((m) => ({
      id: m.id,
      companyId: m.companyId,
      channel: channelOf(m),
      to: m.to,
      from: m.from,
      subject: m.subject ?? null,
      body: m.body,
      mediaUrl: m.mediaUrl ?? null,
      kind: m.kind,
      status: m.status,
      reason: m.reason ?? null,
      errorCode: m.errorCode ?? null,
      providerMessageId: m.providerMessageId ?? null,
      createdAt: new Date(m.createdAt).toISOString(),
      sentAt: m.sentAt === undefined ? null : new Date(m.sentAt).toISOString(),
      deliveredAt: m.deliveredAt === undefined ? null : new Date(m.deliveredAt).toISOString(),
    }));
    const text = json
      .map((m) => {
        const error = m.errorCode ? `  error ${m.errorCode}` : "";
        return `${m.createdAt}  ${m.status.padEnd(11)} ${m.kind}  ${m.to}  company ${m.companyId}  id ${m.id}${m.mediaUrl ? `  media ${m.mediaUrl}` : ""}${error}${m.reason ? `  (${m.reason})` : ""}\n  ${m.subject !== null ? `${m.subject}: ` : ""}${m.body}`;
      })
      .join("\n");
    return { json, text: text || "(none)" };
  },
};

const E164 = /^\+[1-9]\d{6,14}$/;

const smsSendTest: CliCommand = {
  name: "sms send-test",
  summary: "Send a test text through the configured SMS provider now and say what it answered; receipts reach the running server (reachkit outbox list)",
  options: {
    to: { type: "string", description: "The E.164 number to text", required: true, placeholder: "PHONE" },
    company: { type: "string", description: "The company whose sender number it goes from (default: the only company)", placeholder: "ID" },
    body: { type: "string", description: "The text (default: a short test message)", placeholder: "TEXT" },
  },
  async run(values, context) {
    const to = requiredOption(values, "to");
    if (!E164.test(to)) throw new CliUsageError("--to must be an E.164 number (+ and 7 to 15 digits)");
    const kit = await context.openKit();
    const companyId = stringOption(values, "company") ?? (await onlyCompany(kit));
    if (!(await kit.resolve(ACCOUNTS).getCompany(companyId))) throw new CliUsageError(`no company ${companyId}`);
    const message = await kit.outbox.sendNow({ companyId, to, body: stringOption(values, "body") ?? "reachkit test message: your SMS provider works.", kind: "send_test" });
    const answer = { id: message.id, to, from: message.from, status: message.status, providerMessageId: message.providerMessageId ?? null, errorCode: message.errorCode ?? null, reason: message.reason ?? null };
    const error = message.errorCode ? ` (error ${message.errorCode})` : "";
    if (message.status === "failed") throw new Error(`the provider refused the text: ${message.reason ?? "no reason given"}${error}`);
    if (message.status === "queued") throw new Error(`the text did not go out: ${message.reason ?? "no answer"}${error}; the server tries again in a minute (reachkit outbox list --to ${to})`);
    return { json: answer, text: `sent to ${to} from ${message.from}, provider id ${message.providerMessageId}.\nIts delivery receipt reaches the running server: reachkit outbox list --to ${to}` };
  },
};

async function onlyCompany(kit: Reachkit): Promise<string> {
  const companies = await kit.resolve(ACCOUNTS).listCompanies();
  if (companies.length !== 1) throw new CliUsageError(`--company is required: there are ${companies.length} companies`);
  return companies[0]!.id;
}


const emailSendTest: CliCommand = {
  name: "email send-test",
  summary: "Send one email through the configured email adapter at once and print the server's answer (checks REACHKIT_EMAIL and REACHKIT_EMAIL_FROM)",
  options: { to: { type: "string", description: "The address to send it to", required: true, placeholder: "EMAIL" } },
  async run(values, context) {
    const to = requiredOption(values, "to");
    if (!isEmailAddress(to)) throw new CliUsageError(`--to must be an email address, got "${to}"`);
    const kit = await context.openKit();
    if (!kit.container.has(EMAIL_SENDER)) throw new CliUsageError("no email adapter is configured");
    const sender = kit.resolve(EMAIL_SENDER);
    const from = kit.config.messaging.emailFrom;
    // Sent directly, not through the outbox: the operator wants the server's answer now, from this machine.
    try {
      const sent = await sender.send({
        from: `"reachkit" <${from}>`,
        to,
        subject: "reachkit test email",
        text: `This test email was sent by reachkit's ${sender.name} email adapter from ${from}. If you read it, email delivery works.`,
        idempotencyKey: `send-test-${kit.clock.now()}`,
      });
      const json = { sent: true, adapter: sender.name, from, to, providerMessageId: sent.providerMessageId };
      return { json, text: `sent a test email to ${to} from ${from} through ${sender.name} (message id ${sent.providerMessageId})` };
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      const kind = error instanceof EmailSendError ? error.kind : "error";
      return { json: { sent: false, adapter: sender.name, from, to, error: kind, reason }, text: `the test email was not sent (${kind}): ${reason}`, exitCode: 1 };
    }
  },
};

export const coreCommands: readonly CliCommand[] = [init, jobsList, jobsRetry, outboxList, smsSendTest, emailSendTest];

/** The core commands and every plugin's, checked for name clashes. */
export function cliCommands(plugins: readonly { readonly commands?: readonly CliCommand[] }[]): CliCommand[] {
  const commands = [...coreCommands, ...plugins.flatMap((plugin) => plugin.commands ?? [])];
  const seen = new Set<string>();
  for (const command of commands) {
    if (seen.has(command.name)) throw new Error(`two CLI commands are named "${command.name}"`);
    seen.add(command.name);
  }
  return commands;
}
