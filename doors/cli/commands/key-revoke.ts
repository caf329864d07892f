import { hashApiKey, isKeyPrefix, keyPrefix } from '../../../core/identity/api-keys.ts';
import { need, UsageError } from '../args.ts';
import type { AdminCommand } from '../command.ts';

export const keyRevoke: AdminCommand = {
  usage: 'key:revoke --key KEY_OR_PREFIX',
  async run({ values, storage }) {
    // The whole key (any shape: the bootstrap key is whatever BOOTSTRAP_API_KEY held), or its prefix.
    const given = need(values, 'key');
    const found = await storage.workspaces.findKey(hashApiKey(given));
    let prefix: string;
    if (found) prefix = found.key.prefix;
    else if (isKeyPrefix(given)) prefix = given;
    else if (keyPrefix(given) !== given) {
      throw new UsageError(
        `no key matches: ${keyPrefix(given)}_… is not a stored key (check it, or revoke by its prefix: --key ${keyPrefix(given)})`,
      );
    } else
      throw new UsageError(
        'no key matches: pass the whole key, or its prefix (wfs_xxxxxxxx, or boot_xxxxxxxx for BOOTSTRAP_API_KEY; see key:list)',
      );
    if (!(await storage.workspaces.revokeKey(prefix)))
      throw new UsageError(`no live key with prefix ${prefix} (unknown, or revoked already)`);
    return { revoked: true, key_prefix: prefix };
  },
};
