import assert from "node:assert/strict";
import { createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
import { it } from "node:test";
import { answerNode, sendNode } from "../../../adapters/http/shared/node-transport.ts";
import { sendBodyInParts } from "../../support/slow-body-client.ts";

/** The raw status and headers of one answer written by sendNode. */
async function answerOf(status: number): Promise<{ status: number; headers: Record<string, unknown> }> {
  const server = createServer((_request, response) => sendNode(response, { status, headers: {} }));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    return await new Promise((resolve, reject) => {
      request({ port: (server.address() as AddressInfo).port, host: "127.0.0.1" }, (response) => {
        response.resume();
        response.on("end", () => resolve({ status: response.statusCode!, headers: response.headers }));
      })
        .on("error", reject)
        .end();
    });
  } finally {
    server.close();
  }
}

it("sends an empty answer with content-length 0, not chunked (the 200 of an event, the 202 of identity); a 204 with neither", async () => {
  for (const status of [200, 202]) {
    const { headers } = await answerOf(status);
    assert.equal(headers["content-length"], "0", `${status}`);
    assert.equal(headers["transfer-encoding"], undefined, `${status}`);
  }
  const noContent = await answerOf(204);
  assert.equal(noContent.headers["content-length"], undefined);
  assert.equal(noContent.headers["transfer-encoding"], undefined);
});

it("answers a request whose body the route did not read once that body has arrived: closing the connection then loses no answer", async () => {
  const events: string[] = [];
  const answer = "x".repeat(100_000);
  const server = createServer((request, response) => {
    request.once("end", () => events.push("request body arrived"));
    response.once("finish", () => events.push("answer written"));
    void answerNode(request, response, { status: 200, headers: {}, body: answer });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    const chunk = "b".repeat(100_000);
    const port = (server.address() as AddressInfo).port;
    const { body: received } = await sendBodyInParts({ port, method: "GET", path: "/", parts: [chunk, chunk, chunk] });
    assert.equal(received, answer);
    assert.deepEqual(events, ["request body arrived", "answer written"]);
  } finally {
    server.close();
  }
});
