import { setLogLevel } from '../../core/log.ts';
import { startBackend } from './backends.ts';
import { postRow } from './http-client.ts';
import { throughput } from './measure.ts';
import { companyBody, companyCells } from './rows-dataset.ts';
import { createBenchProject } from './seed.ts';
setLogLevel('warn');
const b = await startBackend('mysql');
const { project, columns } = await createBenchProject(b.storage, b.workspaceId, 'probe');
let n = 0;
for (let round = 0; round < Number(process.env.ROUNDS ?? 3); round++) {
  const h = await throughput(() => postRow(b, project.id, companyBody(columns, n++)), 32, 3);
  const r = process.env.HTTP_ONLY ? { perSecond: 0 } : await throughput(() => b.storage.rows.insert(project.pk, columns, [companyCells(columns, n++)]).then(() => undefined), 32, 3);
  console.log(`http ${Math.round(h.perSecond)}/s  repo ${Math.round(r.perSecond)}/s`);
}
await b.stop();
process.exit(0);
