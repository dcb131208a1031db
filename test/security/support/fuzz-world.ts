import { fakeClock } from "../../../adapters/clock/index.ts";
import { memoryObjectStorage } from "../../../adapters/object-storage/memory/index.ts";
import { manualScheduler } from "../../../adapters/scheduler/manual/index.ts";
import { memorySms } from "../../../adapters/sms/memory/index.ts";
import { memoryStorage } from "../../../adapters/storage/memory/index.ts";
import { oauthPlugin } from "../../../plugins/oauth/index.ts";
import { EMAIL_LINKS } from "../../../plugins/subscriptions/index.ts";
import { serverPlugins } from "../../../server/server-kit.ts";
import { createReachkit, DEFAULT_RATE_LIMITS, SCOPES, type InboundWebhookRequest, silentLogger, type InjectResponse, type LogFields, type Logger, type Reachkit } from "../../../src/index.ts";
import { fastPasswords, hiddenFields, InstallClient, REDIRECT_URI, USER_EMAIL, USER_PASSWORD } from "../../support/oauth.ts";
import { TEST_SECRET, type Json } from "../../support/test-kit.ts";
import { waitUntil } from "../../support/wait.ts";

/** Every credential the routes take, and ids of one live resource of each kind, for example requests. */
export interface FuzzWorld {
  kit: Reachkit;
  apiKey: string;
  legacyToken: string;
  oauthToken: string;
  oauth: { clientId: string; clientSecret: string; redirectUri: string; email: string; password: string };
  /** Cookies of a browser signed in on the install page, and the CSRF token tied to them. */
  install: { cookie: string; csrfToken: string };
  /**
   * Browsers on the console: one signed out (its sign-in form's cookie and token),
   * one signed in for every page and action, and one that the sign-out example ends.
   */
  console: {
    signInForm: { cookie: string; csrfToken: string };
    session: { cookie: string; csrfToken: string };
    leaving: { cookie: string; csrfToken: string };
    /** Records the console's actions name: an API key, an OAuth application and two users of the company. */
    credentialId: string;
    applicationId: string;
    userIds: [string, string];
  };
  /** A local date and time a week ahead, for appointments. */
  eventDateTime: string;
  ids: {
    signUpSourceId: string;
    inboundWebhookPath: string;
    senderNumber: string;
    eventTypeUuid: string;
    messageUuid: string;
    /** Reminders to read and update, to cancel, and to mark a no-show. */
    reminderUuid: string;
    cancelReminderUuid: string;
    noShowReminderUuid: string;
    privacyRequestId: string;
    uploadId: string;
    /** The pre-signed upload URL's path and query. */
    uploadPath: string;
    /** A journey to read, change, pause, resume and delete. */
    journeyId: string;
    /** A segment, a draft campaign to it, and a short link's code. */
    segmentId: string;
    campaignId: string;
    shortCode: string;
    /** A webhook of the API key's application. */
    webhookId: string;
    /** Tokens of the links in the company's emails to ada@example.com (MARKETING). */
    confirmEmailToken: string;
    unsubscribeEmailToken: string;
  };
  /** Entries the kit logged at error level (an unhandled error, a failed resolver): each one a bug. */
  errors: { message: string; fields: LogFields }[];
  stop(): Promise<void>;
}

function recordingLogger(errors: FuzzWorld["errors"]): Logger {
  const make = (): Logger => ({ ...silentLogger(), error: (message, fields) => void errors.push({ message, fields: fields ?? {} }), child: () => make() });
  return make();
}

/** The header (and its one valid value) the fuzz world's SMS provider signs inbound webhooks with. */
export const SIGNATURE_HEADER = "x-provider-signature";
export const SIGNATURE = "signed";

/**
 * Active subscribers: the first receives messages and reminders, the second is
 * the one the unsubscribe examples opt out.
 */
export const SUBSCRIBED_PHONES = ["+19148440001", "+19148440002"] as const;

/** Every rate-limit class lifted: the fuzzer sends thousands of requests in one fake second and must reach the handlers. */
const unlimited = () => Object.fromEntries([...Object.keys(DEFAULT_RATE_LIMITS), "default"].map((name) => [name, Infinity]));

function ok(response: InjectResponse, what: string): Json {
  if (response.status >= 300) throw new Error(`fuzz world: ${what} answered ${response.status}: ${response.body}`);
  return response.body === "" ? {} : response.json();
}

/**
 * A kit with every plugin of the self-hosted server on memory adapters (the
 * OAuth plugin with a cheap password hash), seeded by `seedFuzzWorld`.
 */
export async function startFuzzWorld(): Promise<FuzzWorld> {
  const clock = fakeClock("2026-03-01T12:00:00.000Z");
  const errors: FuzzWorld["errors"] = [];
  const plugins = serverPlugins().map((plugin) => (plugin.name === "oauth" ? oauthPlugin({ passwordHasher: fastPasswords }) : plugin));
  const scheduler = manualScheduler(clock);
  const kit = createReachkit({
    storage: memoryStorage(),
    scheduler,
    clock,
    // A provider that signs its webhooks, so the unsigned-path route reaches its handler too.
    sms: Object.assign(memorySms(), { verifyInbound: (request: InboundWebhookRequest) => request.headers[SIGNATURE_HEADER] === SIGNATURE }),
    objectStorage: memoryObjectStorage({ clock }),
    logger: recordingLogger(errors),
    secret: TEST_SECRET,
    plugins,
    config: { rateLimits: unlimited() },
  });
  await kit.start();
  return seedFuzzWorld(kit, { errors, settle: () => scheduler.flush() });
}

/**
 * Gives a started kit with every server plugin one company with an API key, a
 * legacy token and an OAuth token holding every scope, and one live resource
 * of each kind the routes address by id. `settle` runs the jobs due (the
 * legacy subscribers' processing) before the reminders that need them.
 */
export async function seedFuzzWorld(kit: Reachkit, options: { errors: FuzzWorld["errors"]; settle: () => Promise<void> }): Promise<FuzzWorld> {
  const { errors } = options;
  const company = (await kit.provisionCompany({ name: "Acme" })).output as Json;
  const apiKey: string = company.apiKey;
  const legacyToken: string = company.legacyToken;
  const send = (method: string, url: string, token: string, body?: unknown) =>
    kit.inject({ method, url, body, headers: { authorization: `Bearer ${token}` } });

  const oauthApi = kit.plugin("oauth");
  const developer = await kit.plugin("accounts").createCompany({ name: "Appmaker" });
  const { application, clientSecret } = await oauthApi.applications.create({
    companyId: developer.id,
    name: "Shop Sync",
    redirectUris: [REDIRECT_URI],
    scopes: [...SCOPES],
  });
  await oauthApi.users.create({ companyId: company.companyId, email: USER_EMAIL, password: USER_PASSWORD });
  const installUrl = new URL(oauthApi.installUrl({ clientId: application.clientId, redirectUri: REDIRECT_URI, state: "s" }));
  const installPath = `${installUrl.pathname}${installUrl.search}`;
  const browser = new InstallClient(kit);
  await browser.signIn(installPath);
  const { location } = await browser.decide(installPath, "authorize");
  const token = ok(
    await kit.inject({
      method: "POST",
      url: "/v1/authorization-codes/tokens",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: "authorization_code",
        code: location.searchParams.get("code") ?? "",
        redirect_uri: REDIRECT_URI,
        client_id: application.clientId,
        client_secret: clientSecret,
      }).toString(),
    }),
    "token exchange",
  );
  const consentPage = await browser.get(installPath);
  const consoleBrowsers = await consoleSessions(kit);
  const keyApplication = await kit.plugin("accounts").createApplication({ companyId: company.companyId, name: "Revocable", scopes: ["subscriptions:read"] });
  const credential = await kit.plugin("accounts").issueCredential({ companyId: company.companyId, kind: "api_key", applicationId: keyApplication.id });
  const ownApp = await oauthApi.applications.create({ companyId: company.companyId, name: "Own app", redirectUris: [REDIRECT_URI], scopes: ["subscriptions:read"] });
  const consoleUsers = [];
  for (const name of ["role", "delete"]) consoleUsers.push((await oauthApi.users.create({ companyId: company.companyId, email: `${name}@acme.example`, password: USER_PASSWORD, role: "viewer" })).id);

  const eventType = ok(await send("POST", "/events/types", legacyToken, { type: "Haircut" }), "event type");
  const message = ok(
    await send("POST", "/events/types/messages", legacyToken, { eventType: { uuid: eventType.uuid }, messageType: "REMINDER", text: "Reminder: {service} at {eventTime}." }),
    "event message",
  );
  for (const phone of SUBSCRIBED_PHONES) ok(await send("POST", "/1/add-subscribers", legacyToken, { phone }), "subscriber");
  await options.settle();
  const subscriptions = kit.plugin("subscriptions");
  for (const phone of SUBSCRIBED_PHONES) {
    await waitUntil(`${phone} subscribed`, async () =>
      (await subscriptions.eligibility(company.companyId, { phone })).some((row) => row.eligibility.isEligible),
    );
  }
  const eventDateTime = new Date(kit.clock.now() + 7 * 86_400_000).toISOString().slice(0, 19);
  const newReminder = async () =>
    ok(
      await send("POST", "/events/reminders", legacyToken, {
        eventType: { uuid: eventType.uuid },
        phone: SUBSCRIBED_PHONES[0],
        firstName: "Ada",
        eventDateTime,
        subscriberTimeZone: "America/New_York",
        remindTimeOffset: "PT3H",
        metadata: { service: "haircut" },
      }),
      "reminder",
    ).uuid as string;
  const [reminderUuid, cancelReminderUuid, noShowReminderUuid] = [await newReminder(), await newReminder(), await newReminder()];
  const privacyRequest = ok(await send("POST", "/v1/privacy/delete-request", apiKey, { subjectPhone: "+19148440009" }), "privacy request");
  const upload = ok(await send("POST", "/v1/product-catalog/uploads", apiKey, {}), "catalog upload");
  const webhook = ok(await send("POST", "/v1/webhooks", apiKey, { url: "https://hooks.example/reachkit", events: ["sms.subscribed"] }), "webhook");
  const uploadUrl = new URL(upload.uploadUrl);
  const journey = ok(await send("POST", "/v1/journeys", apiKey, { template: "cart_abandonment" }), "journey");
  const segment = ok(await send("POST", "/v1/segments", apiKey, { name: "Gold", rule: { attribute: { name: "tier", op: "eq", value: "gold" } } }), "segment");
  const campaign = ok(await send("POST", "/v1/campaigns", apiKey, { name: "Sale", segmentId: segment.id, channel: "sms", text: "Sale: {link}", link: "https://shop.example.com/sale" }), "campaign");
  const shortLink = ok(await send("POST", "/v1/short-links", apiKey, { url: "https://shop.example.com/sale" }), "short link");
  const links = kit.resolve(EMAIL_LINKS);
  const tokenOf = (url: string) => new URL(url).searchParams.get("token")!;

  return {
    kit,
    apiKey,
    legacyToken,
    oauthToken: token.access_token,
    oauth: { clientId: application.clientId, clientSecret, redirectUri: REDIRECT_URI, email: USER_EMAIL, password: USER_PASSWORD },
    eventDateTime,
    install: { cookie: browser.jar.header().cookie ?? "", csrfToken: hiddenFields(consentPage.body).csrf_token ?? "" },
    console: {
      ...consoleBrowsers,
      credentialId: credential.credential.id,
      applicationId: ownApp.application.applicationId,
      userIds: [consoleUsers[0]!, consoleUsers[1]!],
    },
    ids: {
      signUpSourceId: company.signUpSources[0].id,
      inboundWebhookPath: company.inboundWebhookPath,
      senderNumber: company.senderNumber,
      eventTypeUuid: eventType.uuid,
      messageUuid: message.uuid,
      reminderUuid,
      cancelReminderUuid,
      noShowReminderUuid,
      privacyRequestId: privacyRequest.id,
      uploadId: upload.uploadId,
      journeyId: journey.id,
      segmentId: segment.id,
      campaignId: campaign.id,
      shortCode: shortLink.code,
      webhookId: webhook.id,
      uploadPath: `${uploadUrl.pathname}${uploadUrl.search}`,
      confirmEmailToken: tokenOf(links.confirmUrl(company.companyId, "ada@example.com", "MARKETING")),
      unsubscribeEmailToken: tokenOf(links.unsubscribeUrl(company.companyId, "ada@example.com", "MARKETING")),
    },
    errors,
    stop: () => kit.stop(),
  };
}

/** The cookies of a console browser, and the form token its last page carried. */
async function consoleBrowser(kit: Reachkit, signIn: boolean): Promise<{ cookie: string; csrfToken: string }> {
  const cookies = new Map<string, string>();
  const send = async (method: string, url: string, body?: string) => {
    const cookie = [...cookies].map(([name, value]) => `${name}=${value}`).join("; ");
    const headers: Record<string, string> = { ...(cookie ? { cookie } : {}), ...(body ? { "content-type": "application/x-www-form-urlencoded" } : {}) };
    const response = await kit.inject({ method, url, body, headers });
    const set = /^([^=]+)=([^;]*)/.exec(response.headers["set-cookie"] ?? "");
    if (set) cookies.set(set[1]!, set[2]!);
    return response;
  };
  const form = await send("GET", "/console/sign-in");
  const formToken = hiddenFields(form.body).csrf_token ?? "";
  if (!signIn) return { cookie: [...cookies].map(([name, value]) => `${name}=${value}`).join("; "), csrfToken: formToken };
  const signedIn = await send("POST", "/console/sign-in", new URLSearchParams({ csrf_token: formToken, email: USER_EMAIL, password: USER_PASSWORD }).toString());
  if (signedIn.status !== 303) throw new Error(`fuzz world: console sign-in answered ${signedIn.status}: ${signedIn.body.slice(0, 300)}`);
  const page = await send("GET", "/console");
  return { cookie: [...cookies].map(([name, value]) => `${name}=${value}`).join("; "), csrfToken: hiddenFields(page.body).csrf_token ?? "" };
}

async function consoleSessions(kit: Reachkit): Promise<Pick<FuzzWorld["console"], "signInForm" | "session" | "leaving">> {
  return { signInForm: await consoleBrowser(kit, false), session: await consoleBrowser(kit, true), leaving: await consoleBrowser(kit, true) };
}
