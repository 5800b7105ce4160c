/**
 * The WebDAV XML reader and writer: small and bounded on purpose. No DOCTYPE
 * is accepted, so no entity is ever defined or expanded (billion laughs,
 * external entities); only the five predefined entities and character
 * references are decoded. Depth, element count and input size are bounded
 * before anything is built from them.
 */

export const DAV_XML_MAX_BYTES = 64 * 1024;
export const DAV_XML_MAX_DEPTH = 32;
const MAX_ELEMENTS = 2000;
const MAX_ATTRIBUTES = 32;

export const DAV_NS = "DAV:";

export interface XmlElement {
  ns: string;
  local: string;
  attrs: Record<string, string>;
  children: XmlElement[];
  text: string;
}

const PREDEFINED: Record<string, string> = { lt: "<", gt: ">", amp: "&", quot: '"', apos: "'" };

function decodeEntities(raw: string): string | null {
  let bad = false;
  const out = raw.replace(/&([^;&\s]{1,10});|&/g, (_m, name: string | undefined) => {
    if (name === undefined) {
      bad = true;
      return "";
    }
    if (name in PREDEFINED) return PREDEFINED[name]!;
    const code = /^#x[0-9a-f]{1,6}$/i.test(name)
      ? Number.parseInt(name.slice(2), 16)
      : /^#[0-9]{1,7}$/.test(name)
        ? Number(name.slice(1))
        : Number.NaN;
    if (!Number.isInteger(code) || code < 1 || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) {
      bad = true;
      return "";
    }
    return String.fromCodePoint(code);
  });
  return bad ? null : out;
}

const NAME = /^[A-Za-z_][\w.-]*(:[A-Za-z_][\w.-]*)?$/;

interface Open {
  qname: string;
  scope: Map<string, string>;
  element: XmlElement;
}

/**
 * Parses one document into its root element, or `null` when it is not one
 * this reader accepts (malformed, a DOCTYPE, too deep, too many elements).
 */
export function parseXml(input: string): XmlElement | null {
  if (input.length > DAV_XML_MAX_BYTES) return null;
  const stack: Open[] = [];
  let root: XmlElement | null = null;
  let count = 0;
  let i = 0;
  const base = new Map<string, string>([["xml", "http://www.w3.org/XML/1998/namespace"]]);
  while (i < input.length) {
    const lt = input.indexOf("<", i);
    const textEnd = lt === -1 ? input.length : lt;
    if (textEnd > i) {
      const text = decodeEntities(input.slice(i, textEnd));
      if (text === null) return null;
      const top = stack.at(-1);
      if (top) top.element.text += text;
      else if (text.trim() !== "") return null;
    }
    if (lt === -1) break;
    if (input.startsWith("<?", lt)) {
      const end = input.indexOf("?>", lt + 2);
      if (end === -1) return null;
      i = end + 2;
    } else if (input.startsWith("<!--", lt)) {
      const end = input.indexOf("-->", lt + 4);
      if (end === -1) return null;
      i = end + 3;
    } else if (input.startsWith("<![CDATA[", lt)) {
      const end = input.indexOf("]]>", lt + 9);
      const top = stack.at(-1);
      if (end === -1 || !top) return null;
      top.element.text += input.slice(lt + 9, end);
      i = end + 3;
    } else if (input.startsWith("<!", lt)) {
      // DOCTYPE, ENTITY and every other declaration: refused, never interpreted.
      return null;
    } else if (input.startsWith("</", lt)) {
      const end = input.indexOf(">", lt);
      if (end === -1) return null;
      const qname = input.slice(lt + 2, end).trim();
      const top = stack.pop();
      if (!top || top.qname !== qname) return null;
      i = end + 1;
    } else {
      const end = findTagEnd(input, lt + 1);
      if (end === -1) return null;
      const selfClosing = input[end - 1] === "/";
      const body = input.slice(lt + 1, selfClosing ? end - 1 : end);
      const tag = readTag(body);
      if (!tag) return null;
      if (++count > MAX_ELEMENTS || stack.length >= DAV_XML_MAX_DEPTH) return null;
      if (root && stack.length === 0) return null;
      const scope = new Map(stack.at(-1)?.scope ?? base);
      const attrs: Record<string, string> = {};
      for (const [name, value] of tag.attrs) {
        if (name === "xmlns") scope.set("", value);
        else if (name.startsWith("xmlns:")) {
          // Namespaces in XML 1.0 §3: a prefix cannot be bound to the empty name.
          if (value === "") return null;
          scope.set(name.slice(6), value);
        } else attrs[name] = value;
      }
      const colon = tag.qname.indexOf(":");
      const prefix = colon === -1 ? "" : tag.qname.slice(0, colon);
      const ns = scope.get(prefix);
      if (ns === undefined && prefix !== "") return null;
      const element: XmlElement = { ns: ns ?? "", local: tag.qname.slice(colon + 1), attrs, children: [], text: "" };
      const parent = stack.at(-1);
      if (parent) parent.element.children.push(element);
      else root = element;
      if (!selfClosing) stack.push({ qname: tag.qname, scope, element });
      i = end + 1;
    }
  }
  return stack.length === 0 ? root : null;
}

/** The `>` ending a start tag, skipping any inside quoted attribute values. */
function findTagEnd(input: string, from: number): number {
  let quote: string | null = null;
  for (let j = from; j < input.length; j++) {
    const ch = input[j];
    if (quote) {
      if (ch === quote) quote = null;
    } else if (ch === '"' || ch === "'") quote = ch;
    else if (ch === ">") return j;
    else if (ch === "<") return -1;
  }
  return -1;
}

function readTag(body: string): { qname: string; attrs: [string, string][] } | null {
  const m = /^([^\s/>]+)/.exec(body);
  if (!m || !NAME.test(m[1]!)) return null;
  const attrs: [string, string][] = [];
  const rest = body.slice(m[1]!.length);
  const re = /\s*([^\s=]+)\s*=\s*("([^"]*)"|'([^']*)')/y;
  let at = 0;
  while (at < rest.length) {
    if (/^\s*$/.test(rest.slice(at))) break;
    re.lastIndex = at;
    const a = re.exec(rest);
    if (!a || !NAME.test(a[1]!) || attrs.length >= MAX_ATTRIBUTES) return null;
    const value = decodeEntities(a[3] ?? a[4] ?? "");
    if (value === null) return null;
    attrs.push([a[1]!, value]);
    at = re.lastIndex;
  }
  return { qname: m[1]!, attrs };
}

/** The children of `el` named `local` in `ns`. */
export function childrenNamed(el: XmlElement, local: string, ns = DAV_NS): XmlElement[] {
  return el.children.filter((c) => c.ns === ns && c.local === local);
}

export function childNamed(el: XmlElement, local: string, ns = DAV_NS): XmlElement | undefined {
  return childrenNamed(el, local, ns)[0];
}

export function escapeXml(text: string): string {
  return text.replace(/[<>&"']/g, (ch) => `&${{ "<": "lt", ">": "gt", "&": "amp", '"': "quot", "'": "apos" }[ch]};`);
}

/**
 * An element written back out (a lock's owner, a property name), each
 * element declaring its own namespace so it stands alone inside any document.
 */
export function serializeElement(el: XmlElement, parentNs: string | null = null): string {
  const nsDecl = el.ns === parentNs ? "" : ` xmlns="${escapeXml(el.ns)}"`;
  const attrs = Object.entries(el.attrs)
    .filter(([name]) => !name.includes(":"))
    .map(([name, value]) => ` ${name}="${escapeXml(value)}"`)
    .join("");
  const inner = escapeXml(el.text) + el.children.map((c) => serializeElement(c, el.ns)).join("");
  return inner === "" ? `<${el.local}${nsDecl}${attrs}/>` : `<${el.local}${nsDecl}${attrs}>${inner}</${el.local}>`;
}

/** An empty element for a property name, in its own namespace (`<D:foo/>` for DAV:). */
export function emptyElement(ns: string, local: string): string {
  return ns === DAV_NS ? `<D:${local}/>` : `<${local} xmlns="${escapeXml(ns)}"/>`;
}

/** Characters XML 1.0 cannot carry even as references: a value holding one is refused, so answers stay well-formed. */
const NOT_XML_CHAR = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/;

/** Text and descendants of `el` anywhere in it hold only characters XML 1.0 allows. */
export function xmlSafe(el: XmlElement): boolean {
  return (
    !NOT_XML_CHAR.test(el.text) &&
    Object.values(el.attrs).every((v) => !NOT_XML_CHAR.test(v)) &&
    el.children.every(xmlSafe)
  );
}

/**
 * A property's value written back out: its text, then its elements, each
 * declaring its own namespace, so the value means the same inside any
 * answer whatever prefixes the answer binds.
 */
export function innerXml(el: XmlElement): string {
  return escapeXml(el.text) + el.children.map((c) => serializeElement(c, null)).join("");
}

/** A property with its value (`xml`, from {@link innerXml}), in its own namespace. */
export function propElement(ns: string, local: string, xml: string): string {
  if (xml === "") return emptyElement(ns, local);
  return ns === DAV_NS ? `<D:${local}>${xml}</D:${local}>` : `<${local} xmlns="${escapeXml(ns)}">${xml}</${local}>`;
}
