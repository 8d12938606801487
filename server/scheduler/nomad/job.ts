// The browser-session job: loaded from infra/nomad/browser-session.json (Nomad's JSON form of
// browser-session.nomad.hcl), adjusted to this control plane's config, and the per-node
// variants pinned to one Nomad client (a dispatch cannot carry a constraint: hashicorp/nomad#5764).
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
export const DEFAULT_JOB_FILE = path.join(ROOT, 'infra/nomad/browser-session.json');

type JobJson = Record<string, unknown>;

/** The parts of the job the control plane relies on; the rest is passed to Nomad untouched. */
const TemplateShape = z.looseObject({
  ID: z.string().min(1),
  Type: z.literal('batch'),
  ParameterizedJob: z.looseObject({ MetaRequired: z.array(z.string()).refine((m) => m.includes('session_id'), 'MetaRequired must contain session_id') }),
  TaskGroups: z.array(z.looseObject({
    Tasks: z.array(z.looseObject({ Name: z.string(), Config: z.looseObject({ command: z.string() }), Env: z.record(z.string(), z.string()).optional() })).length(1, 'the browser job has exactly one task (the launcher)'),
  })).length(1, 'the browser job has exactly one task group'),
});

/** Meta keys the scheduler dispatches with; the job must declare them (required or optional). */
export const DISPATCH_META_KEYS = [
  'session_id', 'launcher_token', 'keep_alive', 'viewport', 'control_url', 'node_id', 'agent_port',
  'context_get_url', 'context_put_url', 'context_max_bytes',
] as const;
export type DispatchMeta = Partial<Record<(typeof DISPATCH_META_KEYS)[number], string>> & { session_id: string };

/** Reads a job file: `{ "Job": {...} }` (what `nomad job run -output` prints) or the bare job. */
export async function loadJobFile(file: string = DEFAULT_JOB_FILE): Promise<JobJson> {
  let raw: unknown;
  try {
    raw = JSON.parse(await fs.readFile(file, 'utf8'));
  } catch (err) {
    throw new Error(`cannot read the Nomad job file ${file}: ${(err as Error).message}`);
  }
  const job = z.object({ Job: z.record(z.string(), z.unknown()) }).safeParse(raw).data?.Job ?? raw;
  checkJob(job, file);
  return job as JobJson;
}

export function checkJob(job: unknown, where: string): void {
  const parsed = TemplateShape.safeParse(job);
  if (!parsed.success) {
    throw new Error(`${where} is not a usable browser-session job: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(job)'}: ${i.message}`).join('; ')}`);
  }
}

export interface JobOverrides {
  id: string;
  namespace?: string;
  region?: string;
  datacenters?: string[];
  /** argv of the launcher: [command, ...args]. */
  launcherCommand?: string[];
  chromePath?: string;
  /** CARAVAN_PROFILE_DIR of the launcher (BROWSER_PROFILE_DIR when it is a path); unset, profiles stay in the task dir. */
  profileDir?: string;
}

const clone = <T>(v: T): T => structuredClone(v);

function theTask(job: JobJson): JobJson & { Config: JobJson; Env?: Record<string, string> } {
  const groups = job.TaskGroups as Array<{ Tasks: Array<JobJson & { Config: JobJson; Env?: Record<string, string> }> }>;
  return groups[0]!.Tasks[0]!;
}

/** The job as this control plane registers it. */
export function baseJob(template: JobJson, o: JobOverrides): JobJson {
  const job = clone(template);
  job.ID = o.id;
  job.Name = o.id;
  if (o.namespace) job.Namespace = o.namespace;
  if (o.region) job.Region = o.region;
  if (o.datacenters?.length) job.Datacenters = o.datacenters;
  const task = theTask(job);
  if (o.launcherCommand?.length) {
    const [command, ...args] = o.launcherCommand;
    task.Config = { ...task.Config, command, args };
  }
  if (o.chromePath) task.Env = { ...task.Env, CHROME_PATH: o.chromePath };
  if (o.profileDir) task.Env = { ...task.Env, CARAVAN_PROFILE_DIR: o.profileDir };
  return job;
}

/** Fields Nomad adds to a job it stores; a job read back is registered again without them. */
const SERVER_FIELDS = ['Status', 'StatusDescription', 'Stable', 'Version', 'SubmitTime', 'CreateIndex', 'ModifyIndex', 'JobModifyIndex', 'ParentID', 'Dispatched', 'DispatchIdempotencyToken'];

/** The job ID of the variant pinned to one Caravan node. */
export const pinnedJobId = (baseId: string, nodeId: string): string => `${baseId}-${nodeId}`;

/** A copy of the base job whose allocations can only land on one Nomad client node. */
export function pinnedJob(base: JobJson, nodeId: string, nomadNodeId: string): JobJson {
  const job = clone(base);
  for (const f of SERVER_FIELDS) delete job[f];
  const id = pinnedJobId(String(base.ID), nodeId);
  job.ID = id;
  job.Name = id;
  const constraints = Array.isArray(job.Constraints) ? (job.Constraints as JobJson[]) : [];
  job.Constraints = [...constraints, { LTarget: '${node.unique.id}', RTarget: nomadNodeId, Operand: '=' }];
  job.Meta = { ...(job.Meta as Record<string, string> | undefined), caravan_node: nodeId };
  return job;
}

/** Splits NOMAD_LAUNCHER_COMMAND ("node /opt/caravan/bin/caravan.js launcher"). */
export function parseCommand(line: string | undefined): string[] | undefined {
  const argv = line?.trim().split(/\s+/).filter(Boolean);
  return argv?.length ? argv : undefined;
}
