import { setLogLevel } from '../../core/log.ts';

/**
 * Runs `fn` with the log at `level` (info) and answers what it wrote: the raw text and its JSON lines.
 * (The test preload keeps the log silent; this lets a test read what an operator would see.)
 */
export async function captureLog(
  fn: () => Promise<void>,
  level: Parameters<typeof setLogLevel>[0] = 'info',
): Promise<{ text: string; lines: any[] }> {
  const chunks: string[] = [];
  const out = process.stdout.write.bind(process.stdout);
  const err = process.stderr.write.bind(process.stderr);
  const capture = (chunk: unknown) => {
    chunks.push(String(chunk));
    return true;
  };
  process.stdout.write = capture as typeof process.stdout.write;
  process.stderr.write = capture as typeof process.stderr.write;
  setLogLevel(level);
  try {
    await fn();
  } finally {
    setLogLevel('silent');
    process.stdout.write = out;
    process.stderr.write = err;
  }
  const text = chunks.join('');
  const lines = text
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l));
  return { text, lines };
}
