import { resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Dialect } from '../support/databases.ts';
import { startTestService, type TestService } from '../support/test-service.ts';

/** PLUGINS_DIR of the MCP tests: adds `exploding_builder`, whose bug must surface as internal_error. */
export const FIXTURE_PLUGINS = resolve(import.meta.dir, 'fixtures/plugins');

/** The REST test service, plus its MCP endpoint (both on free ports). */
export interface McpTestService extends TestService {
  mcpUrl: string;
  /** An MCP client (the SDK's own) connected with these headers; default: the test key. */
  client(headers?: Record<string, string>): Promise<Client>;
}

export async function startMcpTestService(dialect: Dialect, env: Record<string, string> = {}): Promise<McpTestService> {
  const t = await startTestService(dialect, { MCP_PORT: '0', PLUGINS_DIR: FIXTURE_PLUGINS, ...env });
  const mcpUrl = t.service.mcpUrl as string;
  const clients: Client[] = [];
  return {
    ...t,
    mcpUrl,
    async client(headers = { 'service-api-key': t.key }) {
      const c = await connect(mcpUrl, headers);
      clients.push(c);
      return c;
    },
    async stop() {
      await Promise.all(clients.map((c) => c.close()));
      await t.stop();
    },
  };
}

export async function connect(url: string, headers: Record<string, string>): Promise<Client> {
  const client = new Client({ name: 'workflow-tests', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  return client;
}

/** Calls a tool and returns its envelope, checking that the text content and structuredContent agree. */
export async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<any> {
  const result = (await client.callTool({ name, arguments: args })) as {
    content: { type: string; text: string }[];
    structuredContent?: unknown;
    isError?: boolean;
  };
  if (result.content.length !== 1 || result.content[0]?.type !== 'text')
    throw new Error(`expected one text content, got ${JSON.stringify(result.content)}`);
  const envelope = JSON.parse(result.content[0].text);
  if (JSON.stringify(envelope) !== JSON.stringify(result.structuredContent)) throw new Error('text content and structuredContent differ');
  if (Boolean(result.isError) !== (envelope.ok === false)) throw new Error(`isError ${result.isError} does not match ok ${envelope.ok}`);
  return envelope;
}

/** The data of a successful call (fails the test with the envelope otherwise). */
export async function data(client: Client, name: string, args: Record<string, unknown> = {}): Promise<any> {
  const envelope = await call(client, name, args);
  if (!envelope.ok) throw new Error(`${name} failed: ${JSON.stringify(envelope)}`);
  return envelope.data;
}

/** A raw JSON-RPC POST to the MCP endpoint (for status codes and headers the SDK client hides). */
export function rpc(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(body),
  });
}
