/**
 * The shape of a V8 CPU profile (`Profiler.stop` of the DevTools protocol), as the gateway child's
 * inspector session and workerd's inspector return it, and as the profile summaries and the stage
 * breakdown read it.
 */

/** Where a profile node's function is: its name, its script's URL, its 0-based line. */
export type CallFrame = { functionName: string; url: string; lineNumber: number };

/** One node of the call tree; `children` are node ids. */
export type ProfileNode = { id: number; callFrame: CallFrame; children?: number[] };

/** The call tree, the node sampled at each tick, and the µs between one sample and the one before. */
export type CpuProfile = { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] };
