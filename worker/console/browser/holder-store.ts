import { type HolderJwk, jwkThumbprint, parseHolderJwk } from "../../../shared/holder-key.ts";

/**
 * The console's own holder key (issue 20): one key pair per browser profile
 * and origin, made on first need. The private key is a non-extractable
 * CryptoKey kept in IndexedDB as the CryptoKey itself (structured clone), so
 * no script, this one included, can ever read it as bytes; it is never
 * exported and never touches localStorage. Only the public JWK is shown.
 */
export interface ConsoleKey {
  privateKey: CryptoKey;
  jwk: HolderJwk;
  jkt: string;
}

export const KEY_DB = "capvault-console";
export const KEY_STORE = "holder-keys";
const KEY_ID = "console";

interface StoredKey {
  privateKey: CryptoKey;
  jwk: HolderJwk;
}

let loading: Promise<ConsoleKey> | null = null;

/** This console's key, made and stored the first time it is asked for. */
export function consoleKey(): Promise<ConsoleKey> {
  loading ??= loadOrMake().catch((err: unknown) => {
    loading = null; // a later need may try again (storage may have been blocked only for a while)
    throw err;
  });
  return loading;
}

async function loadOrMake(): Promise<ConsoleKey> {
  const db = await openDb();
  try {
    const stored = (await read(db)) ?? (await addOnce(db, await makeKey()));
    return { ...stored, jkt: await jwkThumbprint(stored.jwk) };
  } finally {
    db.close();
  }
}

/** Ed25519 where the browser's WebCrypto has it (the vault's default), P-256 (ES256) otherwise. */
async function makeKey(): Promise<StoredKey> {
  let pair: CryptoKeyPair;
  try {
    pair = (await crypto.subtle.generateKey({ name: "Ed25519" }, false, ["sign", "verify"])) as CryptoKeyPair;
  } catch {
    pair = await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, false, ["sign", "verify"]);
  }
  // A public key is always exportable; the private one was made non-extractable above.
  const parsed = parseHolderJwk(await crypto.subtle.exportKey("jwk", pair.publicKey));
  if (!parsed.ok) throw new Error("this browser made a key the vault does not accept");
  return { privateKey: pair.privateKey, jwk: parsed.jwk };
}

function openDb(): Promise<IDBDatabase> {
  return new Promise((resolve, reject) => {
    const open = indexedDB.open(KEY_DB, 1);
    open.onupgradeneeded = () => open.result.createObjectStore(KEY_STORE);
    open.onsuccess = () => resolve(open.result);
    open.onerror = () => reject(new Error("this browser keeps no IndexedDB here, so the console cannot keep a key"));
    open.onblocked = () => reject(new Error("another tab of the console holds the key store open; close it and retry"));
  });
}

function read(db: IDBDatabase): Promise<StoredKey | null> {
  return new Promise((resolve, reject) => {
    const get = db.transaction(KEY_STORE, "readonly").objectStore(KEY_STORE).get(KEY_ID);
    get.onsuccess = () => resolve(isStored(get.result) ? get.result : null);
    get.onerror = () => reject(new Error("the console's key could not be read from IndexedDB"));
  });
}

/**
 * Stores a new key unless one is there: `add` fails on an existing record, so
 * two tabs making a key at once both end up with the one stored first.
 */
async function addOnce(db: IDBDatabase, key: StoredKey): Promise<StoredKey> {
  const added = await new Promise<boolean>((resolve) => {
    const tx = db.transaction(KEY_STORE, "readwrite");
    tx.objectStore(KEY_STORE).add(key, KEY_ID);
    tx.oncomplete = () => resolve(true);
    tx.onabort = () => resolve(false);
  });
  if (added) return key;
  const stored = await read(db);
  if (!stored) throw new Error("the console's key could not be stored in IndexedDB");
  return stored;
}

function isStored(value: unknown): value is StoredKey {
  const v = value as Partial<StoredKey> | undefined;
  return v?.privateKey instanceof CryptoKey && v.privateKey.type === "private" && parseHolderJwk(v.jwk).ok;
}
