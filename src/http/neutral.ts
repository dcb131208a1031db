import type { Readable } from "node:stream";

/** How an adapter hands over the body: as received, as bytes, or already parsed by the host framework. */
export type RequestBody =
  | { kind: "stream"; stream: Readable }
  | { kind: "buffer"; buffer: Buffer }
  | { kind: "parsed"; value: unknown };

/** A request as every HTTP adapter passes it to the core. */
export interface NeutralRequest {
  method: string;
  /** Path and query string as received (still percent-encoded), relative to the mount prefix. */
  url: string;
  /** Header names lower-cased. */
  headers: Record<string, string | string[] | undefined>;
  body?: RequestBody;
  remoteAddress?: string;
}

export interface NeutralResponse {
  status: number;
  /** Header names lower-cased; a list sends the header once per value (`set-cookie`). */
  headers: Record<string, string | string[]>;
  body?: string | Buffer;
}
