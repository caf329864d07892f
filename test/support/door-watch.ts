import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { call } from '../mcp/mcp-support.ts';

/** One answer a client saw: which door, when it was asked (ms since epoch), how long it took, its status. */
export interface Answer {
  door: string;
  at: number;
  ms: number;
  status: number;
  retryAfter: string | null;
  detail?: string;
}

export interface DoorWatch {
  answers: Answer[];
  /** Names of the rows whose add was answered 2xx, and of those answered 503 (they may or may not exist). */
  added: string[];
  unsure: string[];
  stop(): Promise<void>;
}

/**
 * Clients as users run them while a fault happens: through each REST base URL and the MCP client,
 * in turn, they read `readProject` and add one row (a unique Name) to `writeProject`, without pause.
 * Every answer is kept, to check afterwards that none was a 500 and how fast they came.
 */
export function watchDoors(rest: string[], key: string, mcp: Client, readProject: string, writeProject: string): DoorWatch {
  const answers: Answer[] = [];
  const added: string[] = [];
  const unsure: string[] = [];
  let running = true;
  let n = 0;
  const note = (name: string, status: number) => {
    if (status < 300) added.push(name);
    else if (status === 503) unsure.push(name);
  };
  const restLoop = async (base: string, door: string) => {
    const ask = async (method: string, path: string, body?: unknown) => {
      const at = Date.now();
      try {
        const res = await fetch(`${base}${path}`, {
          method,
          headers: { 'service-api-key': key, ...(body ? { 'content-type': 'application/json' } : {}) },
          body: body ? JSON.stringify(body) : undefined,
        });
        const text = await res.text();
        const answer = { door, at, ms: Date.now() - at, status: res.status, retryAfter: res.headers.get('retry-after') };
        answers.push(res.status >= 500 ? { ...answer, detail: text.slice(0, 300) } : answer);
        return res.status;
      } catch (e) {
        answers.push({ door, at, ms: Date.now() - at, status: 0, retryAfter: null, detail: String(e) });
        return 0;
      }
    };
    while (running) {
      const read = await ask('GET', `/projects/${readProject}/rows?page=1&page_size=20`);
      const name = `${door}-${++n}`;
      const written = await ask('POST', `/projects/${writeProject}/rows`, { company: { Name: name } });
      note(name, written);
      if (read === 0 || written === 0) await Bun.sleep(50); // the door is down: ask again, without spinning
    }
  };
  const mcpLoop = async () => {
    const ask = async (tool: string, args: Record<string, unknown>) => {
      const at = Date.now();
      const envelope = await call(mcp, tool, args).catch((e) => ({ ok: false, status_code: 0, detail: String(e) }));
      const status = envelope.ok ? 200 : Number(envelope.status_code ?? 500);
      answers.push({
        door: 'mcp',
        at,
        ms: Date.now() - at,
        status,
        retryAfter: null,
        ...(envelope.ok ? {} : { detail: JSON.stringify(envelope) }),
      });
      return status;
    };
    while (running) {
      const read = await ask('get_project_rows', { project_id: readProject, page_size: 20 });
      const name = `mcp-${++n}`;
      const written = await ask('add_rows', { project_id: writeProject, rows_json: JSON.stringify([{ Name: name }]) });
      note(name, written);
      // A closed client rejects at once, without I/O: without a pause this loop would hold the event loop.
      if (read === 0 || written === 0) await Bun.sleep(50);
    }
  };
  const loops = [...rest.map((base, i) => restLoop(base, `rest-${i}`)), mcpLoop()];
  return {
    answers,
    added,
    unsure,
    async stop() {
      running = false;
      await Promise.all(loops);
    },
  };
}

/** Answers that break the contract: a status other than 2xx or 503 (REST with Retry-After). */
export function badAnswers(answers: Answer[]): Answer[] {
  return answers.filter((a) => !(a.status >= 200 && a.status < 300) && !(a.status === 503 && (a.door === 'mcp' || a.retryAfter !== null)));
}

const shown = (a: Answer, killedAt: number) =>
  `${a.door} asked ${a.at - killedAt} ms after the kill: ${a.status} in ${a.ms} ms ${a.detail ?? ''}`;

/**
 * What the fault tests hold every door to when one node of three dies at `killedAt` and is started
 * again at `restartedAt`; answers the breaches (none when kept):
 * - no 500 (nor network error) at any time; a 503 only with Retry-After, and none asked after the
 *   kill: two nodes could take writes;
 * - each door answered successfully requests asked after the kill, and while the node was dead
 *   every answer came within 2 s of its question, or of the kill for one in flight then (asked up
 *   to 2 s before the restart, whose view changes pause commits for moments of their own);
 * - nothing hung (20 s) at any time, the restart included.
 */
export function faultBreaches(answers: Answer[], doors: string[], killedAt: number, restartedAt: number): string[] {
  const breaches = badAnswers(answers).map((a) => `bad answer: ${shown(a, killedAt)}`);
  for (const a of answers.filter((x) => x.at >= killedAt && x.status === 503))
    breaches.push(`503 with two nodes up: ${shown(a, killedAt)}`);
  for (const door of doors) {
    if (!answers.some((a) => a.door === door && a.at >= killedAt && a.status < 300))
      breaches.push(`${door} answered nothing asked after the kill`);
  }
  // From its question, or from the kill for one in flight then, to its answer.
  const waited = (a: Answer) => a.at + a.ms - Math.max(a.at, killedAt);
  const dead = answers.filter((a) => a.at + a.ms >= killedAt && a.at <= restartedAt - 2_000);
  for (const a of dead.filter((x) => waited(x) >= 2_000)) breaches.push(`slow while the node was dead: ${shown(a, killedAt)}`);
  for (const a of answers.filter((x) => x.ms >= 20_000)) breaches.push(`hung: ${shown(a, killedAt)}`);
  return breaches;
}
