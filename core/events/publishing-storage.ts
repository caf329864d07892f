import type { Storage } from '../ports/storage.ts';
import type { ProjectEventBus } from '../ports/project-events.ts';

/**
 * Makes every committed change of rows, cells, columns and builder state a project event: the
 * row and project repositories are wrapped once, in the kernel, so no service or job has to
 * remember to publish (and a new write path cannot forget).
 */
export function publishingStorage(storage: Storage, events: ProjectEventBus): Storage {
  const rows = storage.rows;
  const projects = storage.projects;
  const builder = (pk: number, state: Parameters<typeof projects.setBuilderState>[1]) =>
    events.publish(pk, {
      type: 'builder',
      status: state.builderStatus,
      progress: state.builderProgress ?? null,
      error: state.builderError ?? null,
    });
  return {
    ...storage,
    rows: overriding(rows, {
      insert: async (...args: Parameters<typeof rows.insert>) => {
        const seqs = await rows.insert(...args);
        if (seqs.length > 0) events.publish(args[0], { type: 'rows', added: seqs.length, deleted: 0 });
        const state = args[3]?.builderState;
        if (state) builder(args[0], state);
        return seqs;
      },
      softDelete: async (...args: Parameters<typeof rows.softDelete>) => {
        const n = await rows.softDelete(...args);
        if (n > 0) events.publish(args[0], { type: 'rows', added: 0, deleted: n });
        return n;
      },
      moveStatus: async (...args: Parameters<typeof rows.moveStatus>) => {
        const moved = await rows.moveStatus(...args);
        const [pk, colNo, , to] = args;
        if (moved.length > 0) events.publish(pk, { type: 'cells', colNo, cells: moved.map((seq) => ({ seq, status: to })) });
        return moved;
      },
      moveHeld: async (...args: Parameters<typeof rows.moveHeld>) => {
        const moved = await rows.moveHeld(...args);
        const [pk, colNo, , , to] = args;
        if (moved.length > 0) events.publish(pk, { type: 'cells', colNo, cells: moved.map((seq) => ({ seq, status: to })) });
        return moved;
      },
      fillEmpty: async (...args: Parameters<typeof rows.fillEmpty>) => {
        const filled = await rows.fillEmpty(...args);
        for (const colNo of new Set(filled.map((f) => f.colNo))) {
          const cells = filled.filter((f) => f.colNo === colNo).map((f) => ({ seq: f.seq, status: 'default' as const, value: f.value }));
          events.publish(args[0], { type: 'cells', colNo, cells });
        }
        return filled;
      },
      updateCells: async (...args: Parameters<typeof rows.updateCells>) => {
        const updated = await rows.updateCells(...args);
        const [pk, seq, cells] = args;
        if (updated) {
          for (const [colNo, cell] of Object.entries(cells))
            events.publish(pk, { type: 'cells', colNo: Number(colNo), cells: [{ seq, status: 'default', value: cell.v }] });
        }
        return updated;
      },
      writeCells: async (...args: Parameters<typeof rows.writeCells>) => {
        await rows.writeCells(...args);
        const [pk, colNo, cells] = args;
        if (cells.length > 0) {
          events.publish(pk, {
            type: 'cells',
            colNo,
            cells: cells.map(({ seq, cell }) => ({ seq, status: cell.s ?? 'completed', value: cell.v, error: cell.e ?? null })),
          });
        }
      },
    }),
    projects: overriding(projects, {
      softDelete: async (...args: Parameters<typeof projects.softDelete>) => {
        await projects.softDelete(...args);
        events.publish(args[0], { type: 'deleted' });
      },
      deleteColumn: async (...args: Parameters<typeof projects.deleteColumn>) => {
        const deleted = await projects.deleteColumn(...args);
        if (deleted) events.publish(args[0], { type: 'deleted', colNo: args[1] });
        return deleted;
      },
      updateColumn: async (...args: Parameters<typeof projects.updateColumn>) => {
        const outcome = await projects.updateColumn(...args);
        if (typeof outcome === 'object') events.publish(args[0], { type: 'columns' });
        return outcome;
      },
      addColumn: async (...args: Parameters<typeof projects.addColumn>) => {
        const column = await projects.addColumn(...args);
        events.publish(args[0], { type: 'columns' });
        return column;
      },
      setBuilderState: async (...args: Parameters<typeof projects.setBuilderState>) => {
        await projects.setBuilderState(...args);
        builder(...args);
      },
      restartBuilder: async (...args: Parameters<typeof projects.restartBuilder>) => {
        const started = await projects.restartBuilder(...args);
        if (started) builder(args[0], args[1]);
        return started;
      },
    }),
  };
}

/**
 * `target` with some methods replaced; every other member is the target's own, bound to it (each
 * function bound once, by identity: reads are on every request, and a method replaced later is bound anew).
 */
function overriding<T extends object>(target: T, overrides: Partial<T>): T {
  const bound = new WeakMap<object, unknown>();
  return new Proxy(target, {
    // A replaced method set again (a profiler's timer around it) replaces the replacement: set on
    // the target, the replacement would call the timer and the timer the replacement, forever.
    set(t, name, value) {
      if (Object.hasOwn(overrides, name)) (overrides as Record<string | symbol, unknown>)[name] = value;
      else Reflect.set(t, name, value, t);
      return true;
    },
    get(t, name) {
      if (Object.hasOwn(overrides, name)) return overrides[name as keyof T];
      const value = Reflect.get(t, name, t);
      if (typeof value !== 'function') return value;
      let fn = bound.get(value);
      if (!fn) {
        fn = value.bind(t);
        bound.set(value, fn);
      }
      return fn;
    },
  });
}
