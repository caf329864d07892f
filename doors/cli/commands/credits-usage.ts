import { CsvText, csvField, need, wholeNumber, workspaceOrFail } from '../args.ts';
import type { AdminCommand } from '../command.ts';

export const creditsUsage: AdminCommand = {
  usage: 'credits:usage --workspace ID [--days N] [--csv]',
  async run({ values, storage }) {
    const ws = await workspaceOrFail(storage, need(values, 'workspace'));
    const days = values.days ? wholeNumber(String(values.days), 'days', 1, 36_500, 'a whole number of days from 1 to 36500') : 30;
    const usage = await storage.credits.usage(ws.id, Date.now() - days * 86_400_000);
    if (!values.csv) return { workspace_id: ws.id, days, usage };
    // CSV for spreadsheets: one line per plugin.
    return new CsvText(['plugin_id,credits', ...usage.map((u) => `${csvField(u.plugin_id)},${u.credits}`)].join('\n'));
  },
};
