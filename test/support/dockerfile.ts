import { readFileSync } from 'node:fs';

/**
 * A reader of the few Dockerfile instructions the image tests compare with the config crane
 * writes (hack/image.sh): enough of the Dockerfile reference's grammar for this repository's
 * Dockerfile (comments, `\` continuations, `KEY=value` pairs with double quotes, JSON-form
 * ENTRYPOINT and CMD), not a general parser.
 */

/** DockerStage is one FROM … AS name stage, with the config it gives an image built to it. */
export interface DockerStage {
  name: string;
  from: string;
  /** the config a target built to this stage has (inherited from its FROM stage, if one of ours) */
  config: ImageConfigFields;
  /** each COPY --from=STAGE SRC DEST of this stage (not inherited) */
  copies: { from: string; src: string; dest: string }[];
  /** each RUN command of this stage, continuations joined */
  runs: string[];
}

/** ImageConfigFields are the fields of an OCI image config that Dockerfile instructions set. */
export interface ImageConfigFields {
  Env: string[];
  User?: string;
  WorkingDir?: string;
  Entrypoint?: string[];
  Cmd?: string[];
  ExposedPorts: string[];
  Labels: Record<string, string>;
}

/** DockerfileInfo is what parseDockerfile read: the global ARG defaults and the stages in order. */
export interface DockerfileInfo {
  args: Record<string, string>;
  stages: DockerStage[];
}

/** readDockerfile parses the Dockerfile at `path`. */
export function readDockerfile(path: string): DockerfileInfo {
  return parseDockerfile(readFileSync(path, 'utf8'));
}

/** parseDockerfile reads the instructions of a Dockerfile's text. */
export function parseDockerfile(text: string): DockerfileInfo {
  const args: Record<string, string> = {};
  const stages: DockerStage[] = [];
  for (const { keyword, rest } of instructions(text)) {
    const stage = stages.at(-1);
    if (keyword === 'FROM') {
      const m = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(rest);
      if (!m) throw new Error(`Dockerfile: cannot read FROM ${rest}`);
      const from = m[1]!.replace(/\$\{(\w+)\}/g, (_, name: string) => args[name] ?? '');
      const base = stages.find((s) => s.name === from);
      const config: ImageConfigFields = base ? structuredClone(base.config) : { Env: [], ExposedPorts: [], Labels: {} };
      stages.push({ name: m[2] ?? String(stages.length), from, config, copies: [], runs: [] });
    } else if (keyword === 'ARG' && stage === undefined) {
      for (const [k, v] of Object.entries(pairs(rest))) args[k] = v;
    } else if (stage === undefined) {
      throw new Error(`Dockerfile: ${keyword} before the first FROM`);
    } else if (keyword === 'ENV') {
      for (const [k, v] of Object.entries(pairs(rest))) stage.config.Env = [...stage.config.Env.filter((e) => !e.startsWith(`${k}=`)), `${k}=${v}`];
    } else if (keyword === 'LABEL') {
      Object.assign(stage.config.Labels, pairs(rest));
    } else if (keyword === 'USER') {
      stage.config.User = rest;
    } else if (keyword === 'WORKDIR') {
      stage.config.WorkingDir = rest;
    } else if (keyword === 'ENTRYPOINT' || keyword === 'CMD') {
      const value = JSON.parse(rest) as string[];
      if (keyword === 'ENTRYPOINT') {
        stage.config.Entrypoint = value;
        delete stage.config.Cmd; // Docker: ENTRYPOINT resets an inherited CMD
      } else stage.config.Cmd = value;
    } else if (keyword === 'EXPOSE') {
      stage.config.ExposedPorts.push(...rest.split(/\s+/).map((p) => (p.includes('/') ? p : `${p}/tcp`)));
    } else if (keyword === 'COPY') {
      const m = /^--from=(\S+)\s+(\S+)\s+(\S+)$/.exec(rest);
      if (m) stage.copies.push({ from: m[1]!, src: m[2]!, dest: m[3]! });
    } else if (keyword === 'RUN') {
      stage.runs.push(rest);
    }
  }
  return { args, stages };
}

/** instructions yields each instruction with its continuation lines joined, comments dropped. */
function* instructions(text: string): Generator<{ keyword: string; rest: string }> {
  let current = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line.startsWith('#') || (line === '' && current === '')) continue;
    if (line.endsWith('\\')) {
      current += `${line.slice(0, -1)} `;
      continue;
    }
    current += line;
    const m = /^(\w+)\s+([\s\S]*)$/.exec(current.trim());
    if (m) yield { keyword: m[1]!.toUpperCase(), rest: m[2]!.replace(/\s+/g, ' ').trim() };
    current = '';
  }
}

/** pairs reads `k=v k2="v two"` (ENV, LABEL, ARG). */
function pairs(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of text.matchAll(/([\w.-]+)=("(?:[^"\\]|\\.)*"|\S*)/g)) {
    const value = m[2]!;
    out[m[1]!] = value.startsWith('"') ? (JSON.parse(value) as string) : value;
  }
  return out;
}
