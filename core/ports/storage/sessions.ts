import type { Role, User, Workspace } from '../../model.ts';

export interface SessionRecord {
  tokenHash: string;
  userId: string;
  workspaceId: string;
  csrfToken: string;
  createdAt: number;
  expiresAt: number;
}

/** A live session with its user, its workspace and the user's role there (read in one query). */
export interface FoundSession {
  session: SessionRecord;
  user: User;
  workspace: Workspace;
  role: Role;
}

export interface SessionRepo {
  create(session: SessionRecord): Promise<void>;
  /** The session if it exists, is not expired at `now`, and its user still belongs to its workspace. */
  find(tokenHash: string, now: number): Promise<FoundSession | undefined>;
  extend(tokenHash: string, expiresAt: number): Promise<void>;
  remove(tokenHash: string): Promise<void>;
  /** Ends every session of a user (a password change). */
  removeForUser(userId: string): Promise<void>;
}
