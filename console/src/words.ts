/**
 * The service's messages as a person reads them in the console. The API keeps its own words (programs
 * and their authors read them: field paths, routes); here a route in brackets goes (the console has a
 * button for it), API field names become what the pages call them, and schema checks become
 * sentences that say what to type.
 */

const NAMES: [RegExp, string][] = [
  [/\bunique_columns\b/g, 'unique key'],
  [/\bform_data\b/g, 'the form'],
  [/\bbuilder_id\b/g, 'builder'],
  [/\btool_id\b/g, 'tool'],
  [/\bcol_ids?\b/g, 'column'],
  [/\brow_ids\b/g, 'rows'],
  [/\bmax_credits\b/g, 'credit cap'],
  [/\bbuilder_status\.warning\b/g, 'a warning on the table'],
  [/\bcsv_text\b/g, 'the pasted text'],
  [/\bupload_id\b/g, 'the file'],
  [/\brun_condition\b/g, 'run condition'],
];

/** A message of the service, without route names and API field names. */
export function plainMessage(message: string): string {
  let m = message.replace(/\s*\([^()]*\b(?:GET|POST|PUT|PATCH|DELETE) \/[^()]*\)/g, '');
  for (const [re, word] of NAMES) m = m.replace(re, word);
  return m;
}

/** TypeBox's checks (as the API answers them) → what to type there; `m` holds the check's number. */
const FIELD_RULES: [RegExp, (m: RegExpExecArray) => string][] = [
  [/^expected required property/i, () => 'Fill this in.'],
  [/^expected string length greater or equal to (\d+)/i, (m) => (m[1] === '1' ? 'Fill this in.' : `At least ${m[1]} characters.`)],
  [/^expected string length less or equal to (\d+)/i, (m) => `At most ${m[1]} characters.`],
  [/^expected (?:integer|number) to be greater or equal to (\S+)/i, (m) => `${m[1]} or more.`],
  [/^expected (?:integer|number) to be greater than (\S+)/i, (m) => `More than ${m[1]}.`],
  [/^expected (?:integer|number) to be less or equal to (\S+)/i, (m) => `${m[1]} or less.`],
  [/^expected (?:integer|number) to be less than (\S+)/i, (m) => `Less than ${m[1]}.`],
  [/^expected array length greater or equal to (\d+)/i, (m) => (m[1] === '1' ? 'Add at least one.' : `Add at least ${m[1]}.`)],
  [/^expected array length less or equal to (\d+)/i, (m) => `At most ${m[1]}.`],
  [/^expected integer/i, () => 'A whole number.'],
  [/^expected number/i, () => 'A number.'],
  [/^expected boolean/i, () => 'Yes or no.'],
  [/^expected union value|^expected .*literal/i, () => 'Pick one of the choices.'],
  [/^expected string to match|^expected string to be .*format/i, () => 'This is not in the expected form.'],
  [/^expected string/i, () => 'Text, please.'],
];

/** A schema check on one field (TypeBox's words, as the API answers them), as what to type there. */
export function plainFieldError(message: string): string {
  const m = message.trim();
  for (const [re, say] of FIELD_RULES) {
    const found = re.exec(m);
    if (found) return say(found);
  }
  const plain = plainMessage(m);
  return plain.charAt(0).toUpperCase() + plain.slice(1);
}
