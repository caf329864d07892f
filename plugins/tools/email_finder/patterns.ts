/**
 * The address patterns companies use, most common first (published surveys of B2B address
 * formats agree on first.last, then flast, then first). `{first}` and `{last}` are the name
 * reduced to a-z and 0-9 ("José María" → "josemaria", "O'Neil-Smith" → "oneilsmith"); `{f}` and
 * `{l}` their initials.
 */
export const PATTERNS = [
  '{first}.{last}',
  '{f}{last}',
  '{first}',
  '{first}{last}',
  '{f}.{last}',
  '{first}{l}',
  '{first}_{last}',
  '{last}.{first}',
  '{last}{f}',
  '{first}-{last}',
  '{last}',
  '{first}.{l}',
] as const;

export type Pattern = (typeof PATTERNS)[number];

/** A name part reduced to what a mailbox name holds: lower case, accents dropped, a-z and 0-9 only. */
export function mailboxPart(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '');
}

/** The address a pattern gives for this person, or null when the pattern needs a part they lack. */
export function applyPattern(pattern: string, first: string, last: string, domain: string): string | null {
  const parts: Record<string, string> = { first, last, f: first.slice(0, 1), l: last.slice(0, 1) };
  let missing = false;
  const local = pattern.replace(/\{(first|last|f|l)\}/g, (_, k: string) => {
    if (!parts[k]) missing = true;
    return parts[k] ?? '';
  });
  return missing || !local ? null : `${local}@${domain}`;
}

/** Every candidate address, in pattern order, without duplicates. */
export function candidates(first: string, last: string, domain: string): { email: string; pattern: Pattern }[] {
  const seen = new Set<string>();
  const out: { email: string; pattern: Pattern }[] = [];
  for (const pattern of PATTERNS) {
    const email = applyPattern(pattern, first, last, domain);
    if (email && !seen.has(email)) {
      seen.add(email);
      out.push({ email, pattern });
    }
  }
  return out;
}
