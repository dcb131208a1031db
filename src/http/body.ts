import type { Readable } from "node:stream";
import { HttpError } from "./errors.ts";

export const payloadTooLarge = (limit: number) =>
  new HttpError(413, "payload_too_large", `request body exceeds ${limit} bytes`, [], { connection: "close" });

export const unsupportedMediaType = (expected: string) =>
  new HttpError(415, "unsupported_media_type", `Content-Type must be ${expected}`);

/** The media type of a Content-Type header, lower-cased, without parameters. */
export function mediaType(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const type = header.split(";", 1)[0]!.trim().toLowerCase();
  return type || undefined;
}

export function isJsonMediaType(type: string | undefined): boolean {
  return type === "application/json" || (type !== undefined && type.startsWith("application/") && type.endsWith("+json"));
}

/** Reads a whole body, refusing it as soon as it passes `limit` bytes (never after buffering it all). */
export async function readLimited(stream: Readable, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const buffer = typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer);
    size += buffer.length;
    if (size > limit) {
      // Stop reading; the adapter closes the connection after the 413 (see payloadTooLarge).
      stream.pause();
      throw payloadTooLarge(limit);
    }
    chunks.push(buffer);
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

export function decodeUtf8(buffer: Buffer): string {
  try {
    return strictUtf8.decode(buffer);
  } catch {
    throw new HttpError(400, "invalid_encoding", "request body is not valid UTF-8");
  }
}

export function parseJsonText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new HttpError(400, "invalid_json", `request body is not valid JSON: ${(error as Error).message}`);
  }
}

export function parseFormText(text: string): Record<string, string> {
  const form: Record<string, string> = {};
  // First value wins: a repeated form key is not an attack vector worth a 400 here.
  for (const [key, value] of new URLSearchParams(text)) if (!(key in form)) form[key] = value;
  return form;
}
