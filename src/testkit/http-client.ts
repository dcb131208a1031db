import { request as httpRequest, type Agent, type ClientRequest, type IncomingHttpHeaders } from "node:http";

/** A JSON body, loosely typed for assertions. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = any;

export interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  /** Whether the request went over a connection a previous request had used (keep-alive). */
  reusedSocket: boolean;
  json(): Json;
}

export interface CallOptions {
  method?: string;
  /** A list sends the header once per value. */
  headers?: Record<string, string | string[]>;
  body?: string | Buffer;
  agent?: Agent;
}

/** An open request whose body the test writes piece by piece. */
export interface OpenRequest {
  readonly request: ClientRequest;
  /** Settles with the answer, or rejects if the connection fails first. */
  readonly answer: Promise<Answer>;
  /** Resolves once the chunk is handed to the socket. */
  write(chunk: Buffer): Promise<void>;
  end(): void;
}

/** Opens a request over node:http (not fetch: the suite needs repeated headers, partial bodies and socket reuse). */
export function open(url: string, options: Omit<CallOptions, "body"> = {}): OpenRequest {
  const request = httpRequest(url, { method: options.method ?? "GET", headers: options.headers, agent: options.agent });
  const answer = new Promise<Answer>((resolve, reject) => {
    request.once("error", reject);
    request.once("response", (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.once("error", reject);
      response.once("end", () => {
        const body = Buffer.concat(chunks).toString("utf8");
        resolve({
          status: response.statusCode ?? 0,
          headers: response.headers,
          body,
          reusedSocket: request.reusedSocket,
          json: () => JSON.parse(body) as Json,
        });
      });
    });
  });
  return {
    request,
    answer,
    write: (chunk) => new Promise((resolve, reject) => request.write(chunk, (error) => (error ? reject(error) : resolve()))),
    end: () => request.end(),
  };
}

/** Sends one request with its whole body and reads the whole answer. */
export function call(url: string, options: CallOptions = {}): Promise<Answer> {
  const opened = open(url, options);
  opened.request.end(options.body);
  return opened.answer;
}
