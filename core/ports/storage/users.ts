import type { Role, User, Workspace } from '../../model.ts';

export interface Member {
  user: User;
  role: Role;
  since: number;
}

export interface UserRepo {
  /** Undefined when the email is taken. */
  create(input: { email: string; passwordHash: string }): Promise<User | undefined>;
  findByEmail(email: string): Promise<(User & { passwordHash: string }) | undefined>;
  get(id: string): Promise<User | undefined>;
  setPasswordHash(userId: string, passwordHash: string): Promise<boolean>;
  /** Sets (adds or changes) a user's role in a workspace. */
  setRole(workspaceId: string, userId: string, role: Role): Promise<void>;
  removeMember(workspaceId: string, userId: string): Promise<boolean>;
  /** The user's workspaces with their role, oldest membership first. */
  workspacesOf(userId: string): Promise<{ workspace: Workspace; role: Role }[]>;
  members(workspaceId: string): Promise<Member[]>;
  /** Invites an email to a workspace with a role (replacing an earlier invitation of it there); answers its id. */
  invite(workspaceId: string, email: string, role: Role, invitedBy: string): Promise<string>;
  /** A workspace's invitations not yet accepted, oldest first. */
  invitationsOf(workspaceId: string): Promise<Invitation[]>;
  /** The invitations waiting for this email, with their workspaces. */
  invitationsFor(email: string): Promise<(Invitation & { workspace: Workspace })[]>;
  /** Removes an invitation to this email (accepted or declined) and answers it; undefined when there is none. */
  takeInvitation(id: string, email: string): Promise<Invitation | undefined>;
  /** Withdraws an invitation of this workspace (false: none). */
  withdrawInvitation(workspaceId: string, id: string): Promise<boolean>;
}

export interface Invitation {
  id: string;
  workspaceId: string;
  email: string;
  role: Role;
  createdAt: number;
}
