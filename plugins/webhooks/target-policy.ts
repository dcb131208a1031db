import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from "node:dns";
import { isIP } from "node:net";
import ipaddr from "ipaddr.js";

/**
 * Where webhooks may be delivered. Only http and https; by default only public
 * unicast addresses: loopback, private, link-local (cloud metadata services
 * answer at 169.254.169.254), unique-local, carrier-grade NAT, multicast,
 * reserved and IPv6 forms that embed an IPv4 address are refused. The address
 * is checked where the connection is made, after DNS (a name that resolves to a
 * public address when the webhook is created and to 127.0.0.1 when it is
 * delivered is refused), and redirects are never followed.
 */

/** A delivery's target resolves to an address the policy refuses. */
export class RefusedTargetError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "RefusedTargetError";
  }
}

/** The range name of an address the policy refuses (`loopback`, `private`...), or undefined for a public unicast one. */
export function refusedRange(address: string): string | undefined {
  if (!ipaddr.isValid(address)) return "invalid";
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === "ipv6" && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  const range = parsed.range();
  return range === "unicast" ? undefined : range;
}

const MAX_URL_LENGTH = 2048;

/** What is wrong with a webhook URL before any connection (scheme, form, a refused literal address), or undefined. */
export function urlProblem(text: string, allowPrivateTargets: boolean): string | undefined {
  if (text.length > MAX_URL_LENGTH) return `must be at most ${MAX_URL_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return "must be an absolute http or https URL";
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return "must be an http or https URL";
  if (url.username !== "" || url.password !== "") return "must not carry a user name or password";
  if (allowPrivateTargets) return undefined;
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (host === "localhost" || host.endsWith(".localhost")) return "must not point at this machine (localhost)";
  if (isIP(host) !== 0) {
    const range = refusedRange(host);
    if (range !== undefined) return `must not point at a ${range} address (${host})`;
  }
  return undefined;
}

/** Refuses a literal address of a URL at connect time (a literal is never looked up). */
export function checkLiteralTarget(url: string, allowPrivateTargets: boolean): void {
  if (allowPrivateTargets) return;
  const host = new URL(url).hostname.replace(/^\[|\]$/g, "");
  if (isIP(host) === 0) return;
  const range = refusedRange(host);
  if (range !== undefined) throw new RefusedTargetError(`${host} is a ${range} address`);
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for the HTTP client's connections: resolves the name, and refuses
 * it when any of its addresses is not public (unless private targets are allowed).
 */
export function guardedLookup(allowPrivateTargets: boolean) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, "");
      if (!allowPrivateTargets) {
        for (const { address } of addresses) {
          const range = refusedRange(address);
          if (range !== undefined) return callback(new RefusedTargetError(`${hostname} resolves to ${address}, a ${range} address`), "");
        }
      }
      if (options.all) return callback(null, addresses);
      const first = addresses[0];
      if (!first) return callback(Object.assign(new Error(`${hostname} has no address`), { code: "ENOTFOUND" }), "");
      callback(null, first.address, first.family);
    });
  };
}
