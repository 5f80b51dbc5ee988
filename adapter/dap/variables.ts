// The variable store: what each variablesReference of the current stop stands for, and values
// as DAP variables (expandable trees, marked as predicted where they came from the model).
// References live until the next stop (reset).
import { Handles } from "@vscode/debugadapter";
import type { DebugProtocol } from "@vscode/debugprotocol";
import { openValue, recordedChildren, rootName, type ValueNode } from "../format/values.js";
import type { Objects } from "../format/trajectory.js";
import { REAL, markVariable, type Origin } from "../session/marks.js";

/**
 * What a variablesReference stands for: a scope (a frame's locals, with the return value or
 * exception at the current frame, or the module's names as Globals), a value's children (marked
 * as their parent is), or one side of compare mode's pair.
 */
export type Container =
  | { kind: "scope"; frame: number; globals?: true }
  | { kind: "node"; node: ValueNode; path?: string; origin: Origin; objects?: Objects; frame?: number }
  | { kind: "compare"; side: "predicted" | "real" }
  | { kind: "group"; variables: DebugProtocol.Variable[] };

/** debugpy's groups of a scope's names, shown as one collapsed entry each: functions and classes (modules, as there, stay among the values). */
const GROUPS: readonly [name: string, repr: RegExp][] = [
  ["function variables", /^<function /],
  ["class variables", /^<class '/],
];

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

  /**
   * A value as a DAP variable; a predicted one (origin) is marked, and so are its children. A
   * container opens into the items its repr shows; an object into the children the run recorded
   * for it (`objects`, by the path that names it), as debugpy opens it.
   */
  variable(name: string, node: ValueNode, path?: string, origin: Origin = REAL, objects?: Objects, frame?: number): DebugProtocol.Variable {
    const opened = recordedChildren(objects, path);
    const count = opened?.length ?? node.children?.length ?? 0;
    const v: DebugProtocol.Variable = {
      name,
      value: node.display,
      type: node.type || undefined,
      variablesReference: count ? this.ref({ kind: "node", node, path, origin, ...(objects ? { objects } : {}), ...(frame !== undefined ? { frame } : {}) }) : 0,
    };
    if (path) v.evaluateName = path;
    if (count) {
      if (opened || node.kind === "dict") v.namedVariables = count;
      else v.indexedVariables = count;
    }
    return markVariable(v, origin);
  }

  /**
   * A scope's variables as debugpy lists them: its functions and classes each in a group of their
   * own ("function variables", "class variables"), after the other names.
   */
  grouped(vars: DebugProtocol.Variable[]): DebugProtocol.Variable[] {
    const out = vars.filter((v) => !GROUPS.some(([, repr]) => repr.test(v.value)));
    for (const [name, repr] of GROUPS) {
      const members = vars.filter((v) => repr.test(v.value));
      if (members.length) out.push({ name, value: "", variablesReference: this.ref({ kind: "group", variables: members }), namedVariables: members.length, presentationHint: { kind: "virtual" } });
    }
    return out;
  }

  /** A value's children (openValue); each one's evaluateName names it from its parent's: `x[0]`, `d['k']`, `(a + b)[1]`, `cart.items`. */
  children(c: Extract<Container, { kind: "node" }>): DebugProtocol.Variable[] {
    return openValue(c.node, c.path, c.objects).map((ch) => this.variable(ch.name, ch.node, ch.path, c.origin, c.objects, c.frame));
  }
}

/**
 * The expression that names a variable of a container and the frame it is read in (as a data
 * breakpoint watches it): a local of a scope, or a part of one (`cart.items`); undefined for what
 * names no value of the program (a group, "(return) f").
 */
export function namedIn(c: Container | undefined, name: string): { frame: number; path: string; parent?: string } | undefined {
  if (c?.kind === "scope") return rootName(name) === name ? { frame: c.frame, path: name } : undefined;
  if (c?.kind !== "node" || c.path === undefined) return undefined;
  const child = openValue(c.node, c.path, c.objects).find((ch) => ch.name === name);
  return child?.path !== undefined ? { frame: c.frame ?? 0, path: child.path, parent: c.path } : undefined;
}

/** The part of a container's variables a request asks for: named or indexed ones, from `start`, at most `count`. */
export function page(vars: DebugProtocol.Variable[], c: Container, args: DebugProtocol.VariablesArguments): DebugProtocol.Variable[] {
  // An object's children are named (its attributes), a dict's too; a sequence's are indexed.
  const named = c.kind === "node" && (c.node.kind === "dict" || recordedChildren(c.objects, c.path) !== undefined);
  if (args.filter === "named" && c.kind === "node" && !named) return [];
  if (args.filter === "indexed" && c.kind === "node" && named) return [];
  if (args.start === undefined && args.count === undefined) return vars;
  const s = args.start ?? 0;
  return vars.slice(s, args.count ? s + args.count : undefined);
}
