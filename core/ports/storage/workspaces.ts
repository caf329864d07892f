import type { Project, Workspace } from '../../model.ts';

export interface ApiKeyRecord {
  id: string;
  workspaceId: string;
  prefix: string;
  keyHash: string;
  revokedAt: number | null;
}

/** A key as an operator lists it: never its hash. */
export interface ApiKeySummary {
  prefix: string;
  createdAt: number;
  revokedAt: number | null;
  /** The email of the user who created it in the console (null: the admin CLI or BOOTSTRAP_API_KEY). */
  createdBy: string | null;
  lastUsedAt: number | null;
  /** Credits it may spend per calendar month (UTC); null: no cap. */
  monthlyCredits: number | null;
  id: string;
}

export interface FoundKey {
  key: ApiKeyRecord;
  workspace: Workspace;
  /** Only when a project id was asked for. */
  project?: Project | null;
}

export interface WorkspaceRepo {
  create(input: { name: string; plan: string }): Promise<Workspace>;
  get(id: string): Promise<Workspace | undefined>;
  setPlan(id: string, plan: string): Promise<boolean>;
  addKey(input: {
    workspaceId: string;
    prefix: string;
    keyHash: string;
    createdBy?: string | null;
    monthlyCredits?: number | null;
  }): Promise<ApiKeyRecord>;
  /** Sets (or with null removes) a live key's monthly credit cap; of this workspace when given (false: no such key). */
  setKeyCap(prefix: string, monthlyCredits: number | null, workspaceId?: string): Promise<boolean>;
  /** The key with this hash (revoked or not), and its workspace. */
  /** With `projectId`: also the workspace's live project of that id (`null` when it has none), in the same read. */
  findKey(keyHash: string, projectId?: string): Promise<FoundKey | undefined>;
  revokeKey(prefix: string): Promise<boolean>;
  /** Revokes a live key of this workspace (false: none with that prefix there). */
  revokeKeyOf(workspaceId: string, prefix: string): Promise<boolean>;
  /** Revokes the live keys of this workspace that this person made (they left it); answers how many. */
  revokeKeysMadeBy(workspaceId: string, userId: string): Promise<number>;
  /** Whether this key of this workspace exists and is not revoked. */
  keyIsLive(workspaceId: string, keyId: string): Promise<boolean>;
  /**
   * Replaces a live key of this workspace by a new one, in one transaction: the new key is added and
   * the old one revoked together (false, and nothing changed: no live key with that prefix there).
   */
  rotateKey(workspaceId: string, prefix: string, next: { prefix: string; keyHash: string; createdBy: string | null }): Promise<boolean>;
  /** The workspace's keys, revoked ones too, oldest first. */
  listKeys(workspaceId: string): Promise<ApiKeySummary[]>;
  /** Records a key's use (callers throttle this: it is a write). */
  touchKey(keyId: string, at: number): Promise<void>;
  /** The oldest workspace of this name (`default`: the bootstrap workspace). */
  findByName(name: string): Promise<Workspace | undefined>;
}
