// A stub's return annotation read as the type of a literal (adapter/python/holes.py, _value_type,
// writes it in the hole's record): what may fill its hole. Python reads the annotation; this is
// the contract, checked where the record is read. `null` is a part nobody read (a class inside a
// container, Any, a TypeVar): anything may stand there. ["class", NAME]: the whole value is an
// instance of the program's own class NAME, written as its constructor's call with literal
// arguments (`Point(x=1, y=2)`), which the program's side builds by calling the class.

export type Simple = "int" | "float" | "bool" | "str" | "bytes" | "None";
export type ValueType =
  | [Simple]
  | ["list" | "set" | "frozenset" | "tuple...", ValueType | null]
  | ["dict", ValueType | null, ValueType | null]
  | ["tuple", ...(ValueType | null)[]]
  | ["union", ...ValueType[]]
  | ["class", string];

/** A hole's answer of a declared type: the value of `target` (the name the call's result is assigned to), or else the return value. */
export interface TypedHole {
  target?: string;
  type: ValueType;
}

const SIMPLE = new Set(["int", "float", "bool", "str", "bytes", "None"]);
const ONE = new Set(["list", "set", "frozenset", "tuple..."]);
/** Deeper than this, an annotation is read as no type (a record is bounded in what it costs to read). */
const MAX_DEPTH = 8;

/** The type a record holds, or undefined where it is not one (a malformed record narrows nothing). */
export function valueType(x: unknown, depth = 0): ValueType | undefined {
  if (!Array.isArray(x) || !x.length || typeof x[0] !== "string" || depth > MAX_DEPTH) return undefined;
  const [kind, ...parts] = x as [string, ...unknown[]];
  const part = (p: unknown): ValueType | null | undefined => (p === null ? null : valueType(p, depth + 1));
  const all = (ps: unknown[]): (ValueType | null)[] | undefined => {
    const out = ps.map(part);
    return out.every((p) => p !== undefined) ? (out as (ValueType | null)[]) : undefined;
  };
  if (SIMPLE.has(kind)) return parts.length ? undefined : [kind as Simple];
  if (ONE.has(kind)) {
    const t = parts.length === 1 ? all(parts) : undefined;
    return t && ([kind, t[0]] as ValueType);
  }
  if (kind === "dict") {
    const t = parts.length === 2 ? all(parts) : undefined;
    return t && ["dict", t[0], t[1]];
  }
  if (kind === "tuple") {
    const t = all(parts);
    return t && ["tuple", ...t];
  }
  if (kind === "class") {
    const name = parts[0];
    return parts.length === 1 && typeof name === "string" && /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) ? ["class", name] : undefined;
  }
  if (kind === "union") {
    const t = parts.length >= 2 ? all(parts) : undefined;
    return t && t.every((p) => p !== null) ? ["union", ...(t as ValueType[])] : undefined;
  }
  return undefined;
}
