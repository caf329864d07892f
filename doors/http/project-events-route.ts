import { validationError } from '../../core/errors.ts';
import { isEventId, type ProjectEvent, type StoredEvent } from '../../core/ports/project-events.ts';
import type { Kernel } from '../../core/kernel.ts';
import type { Column, Project } from '../../core/model.ts';
import { projectEventsOperation } from './project-events-doc.ts';
import type { RouteSpec } from './route-chain.ts';

/** A comment line this often keeps proxies and browsers from closing a quiet stream. */
const HEARTBEAT_MS = 15_000;
/** How soon a stream notices SIGTERM and ends (the client reconnects elsewhere, with Last-Event-ID). */
const DRAIN_CHECK_MS = 500;

/** The event as the stream sends it: column ids and row ids as the REST API names them. */
function wire(event: ProjectEvent, colIds: Map<number, string>): { name: string; data: unknown } {
  switch (event.type) {
    case 'cells':
      return {
        name: 'cells',
        data: {
          col_id: colIds.get(event.colNo) ?? null,
          cells: event.cells.map((c) => ({
            row_id: String(c.seq),
            status: c.status,
            ...('value' in c ? { value: c.value ?? null, error: c.error ?? null } : {}),
          })),
        },
      };
    case 'rows':
      return { name: 'rows', data: { added: event.added, deleted: event.deleted } };
    case 'builder':
      return {
        name: 'builder',
        data: {
          builder_status: { type: event.status, error_message: event.error, ...(event.progress ? { progress: event.progress } : {}) },
        },
      };
    case 'columns':
      return { name: 'columns', data: {} };
    case 'deleted':
      // A deleted column changes the columns; a deleted project ends the stream.
      return event.colNo === undefined ? { name: 'deleted', data: { detail: 'The project was deleted' } } : { name: 'columns', data: {} };
  }
}

/**
 * `GET {BASE_PATH}/projects/{project_id}/events`: Server-Sent Events of one project (docs/console.md) —
 * `cells`, `rows`, `builder`, `columns`, and `reset` when events after the client's
 * `Last-Event-ID` are no longer kept (read the project again). With an API key or a console
 * session; events come from every process (through Redis when REDIS_URL is set).
 */
export const projectEventsRoute: RouteSpec = {
  method: 'GET',
  path: '/projects/{project_id}/events',
  caller: 'key-or-session',
  projectParam: 'project_id',
  doc: projectEventsOperation,
  async handle(ctx) {
    const { request, kernel } = ctx;
    const lastEventId = request.headers.get('last-event-id') ?? new URL(request.url).searchParams.get('last_event_id') ?? undefined;
    if (lastEventId !== undefined && !isEventId(lastEventId)) {
      throw validationError('Last-Event-ID is an event id as the stream sent it (like 1732500000000-0)', [
        { path: 'Last-Event-ID', message: 'an id this stream sent' },
      ]);
    }
    const project = ctx.caller?.project as Project;
    const release = kernel.longRequests.take(project.workspaceId, 'event stream');
    return stream(kernel, project, lastEventId, release);
  },
};

function stream(kernel: Kernel, project: Project, lastEventId: string | undefined, release: () => void): Response {
  const encoder = new TextEncoder();
  let stop = () => {};
  const body = new ReadableStream<Uint8Array>({
    async start(controller) {
      let open = true;
      const send = (text: string) => {
        if (!open) return;
        try {
          controller.enqueue(encoder.encode(text));
        } catch {
          end();
        }
      };
      const columnIds = async () => new Map((await kernel.storage.projects.columns(project.pk)).map((c: Column) => [c.no, c.id]));
      let colIds: Map<number, string>;
      try {
        colIds = await columnIds();
      } catch (e) {
        release();
        throw e;
      }
      // Events arriving while the columns are read again wait, in order.
      let chain = Promise.resolve();
      const onEvent = (e: StoredEvent) => {
        chain = chain.then(async () => {
          if (e.event.type === 'columns' || e.event.type === 'deleted') colIds = await columnIds().catch(() => colIds);
          const { name, data } = wire(e.event, colIds);
          send(`id: ${e.id}\nevent: ${name}\ndata: ${JSON.stringify(data)}\n\n`);
          if (e.event.type === 'deleted' && e.event.colNo === undefined) end(); // nothing more will come
        });
      };
      const onReset = () => {
        chain = chain.then(() =>
          send(`event: reset\ndata: ${JSON.stringify({ detail: 'Events were missed: read the project and its rows again' })}\n\n`),
        );
      };
      send('retry: 3000\n: connected\n\n');
      const unwatch = kernel.events.watch(project.pk, lastEventId, { onEvent, onReset });
      const heartbeat = setInterval(() => send(': keep-alive\n\n'), HEARTBEAT_MS);
      const drain = setInterval(() => {
        if (kernel.lifecycle.draining) end();
      }, DRAIN_CHECK_MS);
      function end() {
        if (!open) return;
        open = false;
        release();
        clearInterval(heartbeat);
        clearInterval(drain);
        unwatch();
        try {
          controller.close();
        } catch {}
      }
      stop = end;
    },
    cancel() {
      stop();
      release(); // a stream cancelled before it started
    },
  });
  return new Response(body, {
    headers: {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      // nginx: pass each event on at once.
      'x-accel-buffering': 'no',
    },
  });
}
