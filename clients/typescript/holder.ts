import { type HolderJwk, jwkThumbprint, parseHolderJwk } from "../../shared/holder-key.ts";
import { type ProofTarget, signProof } from "../../shared/holder-proof-sign.ts";

/** Ed25519 (the default) or P-256, the two key types a vault accepts. */
export type HolderAlgorithm = "Ed25519" | "P-256";

/** A holder's private key as a JWK key file holds it (`d` is the private part). */
export type HolderKeyFile = HolderJwk & { d: string };

function algorithmOf(kind: HolderAlgorithm): { name: "Ed25519" } | { name: "ECDSA"; namedCurve: "P-256" } {
  return kind === "Ed25519" ? { name: "Ed25519" } : { name: "ECDSA", namedCurve: "P-256" };
}

/**
 * The key a holder-bound cap names. Give {@link HolderKey.publicJwk} to whoever
 * mints the cap (`subdir({ holder })`, `mintRoot({ holder })`); pass the
 * HolderKey itself as `holder` in an `FsCap`'s options and every request is
 * signed with a DPoP proof. The private key is non-extractable unless asked
 * for, so a process that holds it cannot leak it as text.
 *
 * @example
 * const key = await HolderKey.generate();
 * const shared = await parent.subdir({ path: "inbox", holder: key.publicJwk });
 * const fs = new FsCap(shared.url, { holder: key });
 */
export class HolderKey {
  readonly #privateKey: CryptoKey;
  readonly #jwk: HolderJwk;
  readonly #jkt: string;

  private constructor(privateKey: CryptoKey, jwk: HolderJwk, jkt: string) {
    this.#privateKey = privateKey;
    this.#jwk = jwk;
    this.#jkt = jkt;
  }

  /** A fresh key pair; `extractable: true` only when it must be saved as a key file. */
  static async generate(options: { algorithm?: HolderAlgorithm; extractable?: boolean } = {}): Promise<HolderKey> {
    const pair = (await crypto.subtle.generateKey(
      algorithmOf(options.algorithm ?? "Ed25519"),
      options.extractable ?? false,
      ["sign", "verify"],
    )) as CryptoKeyPair;
    return HolderKey.fromKeyPair(pair);
  }

  /** A WebCrypto key pair (Ed25519 or ECDSA P-256); the public key must be extractable, as WebCrypto makes it. */
  static async fromKeyPair(pair: CryptoKeyPair): Promise<HolderKey> {
    const parsed = parseHolderJwk(await crypto.subtle.exportKey("jwk", pair.publicKey));
    if (!parsed.ok) throw new TypeError(`not a holder key (${parsed.reason}): use Ed25519 or P-256`);
    return new HolderKey(pair.privateKey, parsed.jwk, await jwkThumbprint(parsed.jwk));
  }

  /** A key from a JWK key file ({@link HolderKey.exportKeyFile}); imported non-extractable unless asked. */
  static async fromKeyFile(file: unknown, options: { extractable?: boolean } = {}): Promise<HolderKey> {
    if (typeof file !== "object" || file === null) throw new TypeError("a key file is a JSON object (a private JWK)");
    const { d, ...pub } = file as Record<string, unknown>;
    const parsed = parseHolderJwk(pub);
    if (!parsed.ok || typeof d !== "string") throw new TypeError("a key file is a private Ed25519 or P-256 JWK");
    const algorithm = parsed.jwk.kty === "OKP" ? algorithmOf("Ed25519") : algorithmOf("P-256");
    const privateKey = await crypto.subtle.importKey(
      "jwk",
      { ...parsed.jwk, d },
      algorithm,
      options.extractable ?? false,
      ["sign"],
    );
    return new HolderKey(privateKey, parsed.jwk, await jwkThumbprint(parsed.jwk));
  }

  /** The public key, as `holder` in a mint request. */
  get publicJwk(): HolderJwk {
    return { ...this.#jwk };
  }

  /** The RFC 7638 thumbprint a bound cap's info shows. */
  get jkt(): string {
    return this.#jkt;
  }

  /** The private key as a JWK key file; refused for a non-extractable key (the default). */
  async exportKeyFile(): Promise<HolderKeyFile> {
    if (!this.#privateKey.extractable) throw new TypeError("this holder key is not extractable");
    const jwk = (await crypto.subtle.exportKey("jwk", this.#privateKey)) as { d?: string };
    if (typeof jwk.d !== "string") throw new TypeError("the key exported without its private part");
    return { ...this.#jwk, d: jwk.d };
  }

  /** A DPoP proof for one request. */
  proof(target: ProofTarget): Promise<string> {
    return signProof({ privateKey: this.#privateKey, jwk: this.#jwk }, target);
  }

  toJSON(): { jkt: string } {
    return { jkt: this.#jkt };
  }
}
