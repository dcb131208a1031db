import { request } from "node:http";

export interface SlowBodyRequest {
  port: number;
  method: string;
  path: string;
  headers?: Record<string, string>;
  /** The body's parts, each written after a turn of the event loop: the server is free to answer before the last. */
  parts: readonly string[];
}

/**
 * Sends a request whose body arrives in parts over a connection of its own
 * (closed after the answer) and resolves with the answer's status and body,
 * rejecting when the answer is cut off: what a client sees when a server
 * answers before reading the body and then closes on the unread bytes.
 */
export function sendBodyInParts(options: SlowBodyRequest): Promise<{ status: number; body: string }> {
  const length = options.parts.reduce((sum, part) => sum + Buffer.byteLength(part), 0);
  return new Promise((resolve, reject) => {
    const client = request(
      { port: options.port, host: "127.0.0.1", method: options.method, path: options.path, agent: false, headers: { ...options.headers, "content-length": String(length) } },
      (response) => {
        let body = "";
        response.setEncoding("utf8");
        response.on("data", (data: string) => (body += data));
        response.on("error", reject);
        response.on("end", () => resolve({ status: response.statusCode!, body }));
      },
    );
    client.on("error", reject);
    const sendPart = (index: number) => (index === options.parts.length ? client.end() : client.write(options.parts[index]!, () => setImmediate(() => sendPart(index + 1))));
    sendPart(0);
  });
}
