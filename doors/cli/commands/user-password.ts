import { setPassword } from '../../../core/identity/accounts.ts';
import { need } from '../args.ts';
import type { AdminCommand } from '../command.ts';

export const userPassword: AdminCommand = {
  usage: 'user:password --email E --password P   (also signs them out everywhere)',
  async run({ values, storage }) {
    const user = await setPassword(storage, need(values, 'email'), need(values, 'password'));
    return { user_id: user.id, email: user.email, password_changed: true, sessions_ended: true };
  },
};
