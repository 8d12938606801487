// The Nomad double's task driver: runs a raw_exec/exec task as a REAL local process in its own
// process group, with the task environment Nomad builds (NOMAD_* variables, NOMAD_META_* from
// job, group and task meta) and ${...} interpolation of env, command and args.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export interface DoubleNodeInfo {
  ID: string;
  Name: string;
  Datacenter: string;
  Meta: Record<string, string>;
}

type Json = Record<string, unknown>;

export interface TaskContext {
  job: Json;
  group: Json;
  task: Json;
  node: DoubleNodeInfo;
  allocId: string;
  allocName: string;
  allocDir: string;
  namespace: string;
  region: string;
  baseEnv: Record<string, string>;
}

const strMap = (v: unknown): Record<string, string> =>
  v && typeof v === 'object' ? Object.fromEntries(Object.entries(v as Json).map(([k, x]) => [k, String(x)])) : {};

/** Node-side variables usable in constraints and interpolation. */
export function nodeVariables(node: DoubleNodeInfo): Record<string, string> {
  return {
    'node.unique.id': node.ID,
    'node.unique.name': node.Name,
    'node.datacenter': node.Datacenter,
    'node.region': 'global',
    'node.class': '',
    'attr.kernel.name': 'linux',
    'attr.unique.hostname': node.Name,
    'attr.unique.network.ip-address': '127.0.0.1',
    'attr.driver.raw_exec': '1',
    'attr.driver.exec': '1',
    ...Object.fromEntries(Object.entries(node.Meta).map(([k, v]) => [`meta.${k}`, v])),
  };
}

/** Replaces ${NAME} from `vars`; unknown names are left as they are, like Nomad does. */
export function interpolate(text: string, vars: Record<string, string>): string {
  return text.replace(/\$\{([^}]+)\}/g, (whole, name: string) => {
    const key = name.trim();
    const env = /^env\["(.+)"\]$/.exec(key);
    const v = vars[env ? env[1]! : key];
    return v === undefined ? whole : v;
  });
}

export function taskEnv(c: TaskContext): Record<string, string> {
  const taskDir = path.join(c.allocDir, String(c.task.Name), 'local');
  const secretsDir = path.join(c.allocDir, String(c.task.Name), 'secrets');
  fs.mkdirSync(taskDir, { recursive: true });
  fs.mkdirSync(secretsDir, { recursive: true });
  const meta = { ...strMap(c.job.Meta), ...strMap(c.group.Meta), ...strMap(c.task.Meta) };
  const resources = (c.task.Resources ?? {}) as Json;
  const env: Record<string, string> = {
    ...c.baseEnv,
    NOMAD_ALLOC_DIR: path.join(c.allocDir, 'alloc'),
    NOMAD_TASK_DIR: taskDir,
    NOMAD_SECRETS_DIR: secretsDir,
    NOMAD_ALLOC_ID: c.allocId,
    NOMAD_SHORT_ALLOC_ID: c.allocId.slice(0, 8),
    NOMAD_ALLOC_NAME: c.allocName,
    NOMAD_ALLOC_INDEX: '0',
    NOMAD_TASK_NAME: String(c.task.Name),
    NOMAD_GROUP_NAME: String(c.group.Name),
    NOMAD_JOB_ID: String(c.job.ID),
    NOMAD_JOB_NAME: String(c.job.Name ?? c.job.ID),
    ...(c.job.ParentID ? { NOMAD_JOB_PARENT_ID: String(c.job.ParentID) } : {}),
    NOMAD_DC: c.node.Datacenter,
    NOMAD_NAMESPACE: c.namespace,
    NOMAD_REGION: c.region,
    NOMAD_CPU_LIMIT: String(resources.CPU ?? 100),
    NOMAD_MEMORY_LIMIT: String(resources.MemoryMB ?? 300),
  };
  for (const [k, v] of Object.entries(meta)) {
    env[`NOMAD_META_${k}`] = v;
    env[`NOMAD_META_${k.toUpperCase()}`] = v;
  }
  const vars = { ...nodeVariables(c.node), ...env };
  for (const [k, v] of Object.entries(strMap(c.task.Env))) env[k] = interpolate(v, vars);
  return env;
}

export interface StartedTask {
  child: ChildProcess;
  stdoutFile: string;
  stderrFile: string;
}

/** Starts the task's command; `onSpawn`/`onError`/`onExit` report what happened. */
export function startTask(c: TaskContext, hooks: {
  onSpawn(): void;
  onError(err: Error): void;
  onExit(code: number | null, signal: NodeJS.Signals | null): void;
}): StartedTask | undefined {
  const env = taskEnv(c);
  const config = (c.task.Config ?? {}) as Json;
  const vars = { ...nodeVariables(c.node), ...env };
  const command = interpolate(String(config.command ?? ''), vars);
  const args = Array.isArray(config.args) ? config.args.map((a) => interpolate(String(a), vars)) : [];
  const logs = path.join(c.allocDir, 'alloc', 'logs');
  fs.mkdirSync(logs, { recursive: true });
  const stdoutFile = path.join(logs, `${String(c.task.Name)}.stdout.0`);
  const stderrFile = path.join(logs, `${String(c.task.Name)}.stderr.0`);
  const out = fs.openSync(stdoutFile, 'a');
  const err = fs.openSync(stderrFile, 'a');
  let child: ChildProcess;
  try {
    child = spawn(command, args, { env, cwd: path.join(c.allocDir, String(c.task.Name)), detached: true, stdio: ['ignore', out, err] });
  } catch (e) {
    fs.closeSync(out);
    fs.closeSync(err);
    hooks.onError(e as Error);
    return undefined;
  }
  fs.closeSync(out);
  fs.closeSync(err);
  let failed = false;
  child.once('spawn', () => hooks.onSpawn());
  child.once('error', (e) => {
    failed = true;
    hooks.onError(e);
  });
  child.once('exit', (code, signal) => {
    // The task's whole process group goes with it (Nomad's executor and cgroups do the same).
    killGroup(child.pid, 'SIGKILL');
    if (!failed) hooks.onExit(code, signal);
  });
  return { child, stdoutFile, stderrFile };
}

export function killGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (!pid) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // gone
  }
}
