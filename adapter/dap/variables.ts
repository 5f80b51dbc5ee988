// The variable store: what each variablesReference of the current stop stands for, and values
// as DAP variables (expandable trees, marked as predicted where they came from the model).
// References live until the next stop (reset).
import { Handles } from "@vscode/debugadapter";
import type { DebugProtocol } from "@vscode/debugprotocol";
import type { ValueNode } from "../format/values.js";
import { REAL, markVariable, type Origin } from "./marks.js";

/**
 * What a variablesReference stands for: a scope (a frame's locals, with the return value or
 * exception at the current frame, or the module's names as Globals), a value's children (marked
 * as their parent is), or one side of compare mode's pair.
 */
export type Container =
  | { kind: "scope"; frame: number; globals?: true }
  | { kind: "node"; node: ValueNode; path?: string; origin: Origin }
  | { kind: "compare"; side: "predicted" | "real" };

export class VariableStore {
  private handles = new Handles<Container>();

  reset(): void {
    this.handles.reset();
  }

  ref(c: Container): number {
    return this.handles.create(c);
  }

  get(ref: number): Container | undefined {
    return this.handles.get(ref);
  }

  /** A value as a DAP variable; a predicted one (origin) is marked, and so are its children. */
  variable(name: string, node: ValueNode, path?: string, origin: Origin = REAL): DebugProtocol.Variable {
    const v: DebugProtocol.Variable = {
      name,
      value: node.display,
      type: node.type || undefined,
      variablesReference: node.children?.length ? this.ref({ kind: "node", node, path, origin }) : 0,
    };
    if (path) v.evaluateName = path;
    if (node.children?.length) {
      if (node.kind === "dict") v.namedVariables = node.children.length;
      else v.indexedVariables = node.children.length;
    }
    return markVariable(v, origin);
  }

  /** A value's children; each one's evaluateName subscripts its parent's: `x[0]`, `d['k']`, `(a + b)[1]`. */
  children(c: Extract<Container, { kind: "node" }>): DebugProtocol.Variable[] {
    const node = c.node;
    const base = c.path && (/^[\p{ID_Start}_][\p{ID_Continue}]*(\[.*\])*$/u.test(c.path) ? c.path : `(${c.path})`);
    const childPath = (name: string): string | undefined => {
      if (!base) return undefined;
      if (node.kind === "list" || node.kind === "tuple") return `${base}${name}`;
      if (node.kind === "dict") return `${base}[${name}]`;
      return undefined; // set elements cannot be named
    };
    return (node.children ?? []).map((ch) => this.variable(ch.name, ch.node, childPath(ch.name), c.origin));
  }
}

/** The part of a container's variables a request asks for: named or indexed ones, from `start`, at most `count`. */
export function page(vars: DebugProtocol.Variable[], c: Container, args: DebugProtocol.VariablesArguments): DebugProtocol.Variable[] {
  if (args.filter === "named" && c.kind === "node" && c.node.kind !== "dict") return [];
  if (args.filter === "indexed" && c.kind === "node" && c.node.kind === "dict") return [];
  if (args.start === undefined && args.count === undefined) return vars;
  const s = args.start ?? 0;
  return vars.slice(s, args.count ? s + args.count : undefined);
}
