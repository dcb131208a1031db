import type { JWTPayload } from "jose";
import { CLOCK, inject, injectable, PUBLIC_URL, SECRET, sign, type Clock, type PublicUrl } from "../../src/index.ts";

/** How long an id_token may be relied on after the exchange. */
export const ID_TOKEN_TTL_SECONDS = 60 * 60;

/** What the id_token of a token exchange says: which company installed which application. */
export interface IdTokenClaims extends JWTPayload {
  /** The installing company's id (also in `company_id`). */
  sub: string;
  /** The client id of the application. */
  aud: string;
  company_id: string;
  company_name: string;
  company_domain: string;
  application_id: string;
  application_name: string;
  /** The granted scopes, space-separated. */
  scope: string;
}

/**
 * Signs and checks id_tokens: JWTs with HS256 whose key is derived from the kit
 * secret (HMAC-SHA256 of the secret and a fixed label, so the raw secret signs
 * nothing else). Only the kit can verify them; a client receives them straight
 * from the token endpoint over TLS and may read them without a check.
 */
/** jose is loaded at the first id_token: at every start it cost about 40 ms of CPU, a CLI call's included. */
const jose = () => import("jose");

@injectable()
export class IdTokens {
  readonly #key: Uint8Array;
  private readonly issuer: string;

  constructor(
    @inject(SECRET) secret: string,
    @inject(CLOCK) private readonly clock: Clock,
    @inject(PUBLIC_URL) publicUrl: PublicUrl,
  ) {
    this.#key = new TextEncoder().encode(sign(secret, "reachkit oauth id_token"));
    this.issuer = publicUrl("api", "");
  }

  async sign(claims: Omit<IdTokenClaims, "iss" | "iat" | "exp">): Promise<string> {
    const now = Math.floor(this.clock.now() / 1000);
    const { SignJWT } = await jose();
    return new SignJWT(claims)
      .setProtectedHeader({ alg: "HS256", typ: "JWT" })
      .setIssuer(this.issuer)
      .setIssuedAt(now)
      .setExpirationTime(now + ID_TOKEN_TTL_SECONDS)
      .sign(this.#key);
  }

  /** The claims of a token this kit signed; throws when the signature, issuer or expiry is wrong. */
  async verify(token: string): Promise<IdTokenClaims> {
    const { jwtVerify } = await jose();
    const { payload } = await jwtVerify(token, this.#key, {
      algorithms: ["HS256"],
      issuer: this.issuer,
      currentDate: new Date(this.clock.now()),
    });
    return payload as IdTokenClaims;
  }
}
