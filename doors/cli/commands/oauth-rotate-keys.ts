import { SigningKeys } from '../../../core/identity/oauth/signing-keys.ts';
import type { AdminCommand } from '../command.ts';

export const oauthRotateKeys: AdminCommand = {
  usage: 'oauth:rotate-keys               (a new signing key for access tokens; the old ones verify for another hour)',
  async run({ storage, config }) {
    // Every process signs the next token with the new key (keys are read per token) and accepts it at once (by key id).
    const keys = new SigningKeys(storage.oauth, config.oauthAccessTokenSeconds);
    const rotated = await keys.rotate();
    return { kid: rotated.kid, retired: rotated.retired, retired_keys_verify_until: new Date(Date.now() + keys.overlapMs).toISOString() };
  },
};
