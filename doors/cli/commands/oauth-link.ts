import { need, UsageError, workspaceOrFail } from '../args.ts';
import type { AdminCommand } from '../command.ts';

export const oauthLink: AdminCommand = {
  usage: 'oauth:link --workspace ID --subject SUB [--issuer URL]   (MCP OAuth; issuer defaults to OAUTH_ISSUER)',
  async run({ values, storage, config }) {
    // An OAuth access token without a workspace_id claim reaches the workspace its subject is linked to.
    const ws = await workspaceOrFail(storage, need(values, 'workspace'));
    const issuer = typeof values.issuer === 'string' ? values.issuer : config.oauthIssuer;
    if (!issuer) throw new UsageError('--issuer is required when OAUTH_ISSUER is not set');
    const subject = need(values, 'subject');
    await storage.oauthIdentities.link({ issuer, subject, workspaceId: ws.id });
    return { workspace_id: ws.id, issuer, subject, linked: true };
  },
};
