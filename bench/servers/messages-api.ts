// A local Messages API (Twilio's 2010-04-01 shape) in its own process, so its CPU counts for neither side of bench:delivery.
import { MessagesApi } from "../../test/support/messages-api.ts";
import "./cpu-probe.ts";

const api = await new MessagesApi().start();
// The messages it keeps are not needed here: a bench posts tens of thousands.
setInterval(() => {
  api.messages.length = 0;
  api.createRequests.length = 0;
}, 1_000).unref();
console.log(`PORT ${new URL(api.url).port}`);
