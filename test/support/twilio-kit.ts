import { twilioSms, type TwilioSmsOptions } from "../../adapters/sms/twilio/index.ts";
import type { Reachkit, SmsSender } from "../../src/index.ts";
import { loopbackServer } from "./loopback-server.ts";
import type { MessagesApi } from "./messages-api.ts";

export interface ServedTwilioKit<K extends Reachkit> {
  kit: K;
  sender: SmsSender;
  /** The kit's public URL: Twilio's callbacks and webhooks reach it there. */
  publicUrl: string;
  /** Another Twilio adapter with the same settings, as a restarted process makes. */
  reopen(): SmsSender;
  close(): Promise<void>;
}

/**
 * A kit whose SMS go through the Twilio adapter to a local Messages API, served
 * on a real socket so that the API's status callbacks and inbound webhooks
 * reach it. `makeKit` builds the kit around the sender; it is started here.
 */
export async function servedTwilioKit<K extends Reachkit>(
  api: MessagesApi,
  makeKit: (sender: SmsSender, publicUrl: string) => K,
  options: Partial<TwilioSmsOptions> = {},
): Promise<ServedTwilioKit<K>> {
  // Listening first tells the port, which the adapter's callback URLs need.
  const server = await loopbackServer();
  const publicUrl = server.url;
  const settings: TwilioSmsOptions = { accountSid: api.accountSid, authToken: api.authToken, publicUrl, apiUrl: api.url, ...options };
  const sender = twilioSms(settings);
  const kit = makeKit(sender, publicUrl);
  await kit.start();
  server.serve(kit);
  return {
    kit,
    sender,
    publicUrl,
    reopen: () => twilioSms(settings),
    async close() {
      await server.close();
      await kit.stop();
    },
  };
}
