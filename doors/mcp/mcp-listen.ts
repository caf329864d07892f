import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import type { Kernel } from '../../core/kernel.ts';
import { callerOf } from './mcp-auth.ts';

/**
 * `subscriptions/listen` (2026-07-28) for a project's resources: while a client listens to
 * `workflow://projects/{id}` (or its `/rows`), the project's events — published by whichever
 * process changed it, delivered to every process — become `notifications/resources/updated` on
 * its stream. The SDK's listen router delivers and filters; this feeds it, one event watch per
 * project however many streams listen to it, and refuses URIs of projects the caller cannot read.
 */

const PROJECT_URI = /^workflow:\/\/projects\/([^/?#]+)(\/rows)?(\?.*)?$/;

export interface ListenFeed {
  /**
   * Checks a listen request's resource URIs against the caller's workspace and watches their
   * projects until `release` (the stream ended); answers the URIs refused (not the caller's: then
   * nothing is watched).
   */
  hold(authInfo: AuthInfo | undefined, params: unknown): Promise<{ refused: string[]; release: () => void }>;
}

export function listenFeed(kernel: Kernel, resourceUpdated: (uri: string) => void): ListenFeed {
  const watches = new Map<number, { holders: number; stop: () => void }>();
  const watch = (pk: number, id: string) => {
    const held = watches.get(pk);
    if (held) {
      held.holders++;
      return;
    }
    const stop = kernel.events.watch(pk, undefined, {
      onEvent: () => {
        resourceUpdated(`workflow://projects/${id}`);
        resourceUpdated(`workflow://projects/${id}/rows`);
      },
      onReset: () => resourceUpdated(`workflow://projects/${id}`),
    });
    watches.set(pk, { holders: 1, stop });
  };
  const release = (pk: number) => {
    const held = watches.get(pk);
    if (!held) return;
    if (--held.holders > 0) return;
    held.stop();
    watches.delete(pk);
  };
  return {
    async hold(authInfo, params) {
      const none = { refused: [], release: () => undefined };
      const uris = (params as { notifications?: { resourceSubscriptions?: unknown } } | undefined)?.notifications?.resourceSubscriptions;
      if (!Array.isArray(uris) || uris.length === 0) return none;
      const workspace = callerOf(authInfo).workspace;
      const refused: string[] = [];
      const projects = new Map<number, string>();
      for (const uri of uris) {
        const id = typeof uri === 'string' ? PROJECT_URI.exec(uri)?.[1] : undefined;
        const project = id && workspace ? await kernel.storage.projects.get(workspace.id, decodeURIComponent(id)) : undefined;
        if (project) projects.set(project.pk, project.id);
        else refused.push(String(uri));
      }
      if (refused.length) return { refused, release: () => undefined };
      for (const [pk, id] of projects) watch(pk, id);
      let released = false;
      return {
        refused: [],
        release: () => {
          if (released) return;
          released = true;
          for (const pk of projects.keys()) release(pk);
        },
      };
    },
  };
}
